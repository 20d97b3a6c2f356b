'use strict';
// Node's ES module loader needs full relative specifiers ('./common/index.js'), while the sources
// (compiled once for both formats) write them the CommonJS way ('./common'). These helpers make
// the ES module build's specifiers explicit, by looking at the files the compiler wrote.
const fs = require('node:fs');
const path = require('node:path');

/** Relative specifiers of static imports/exports, dynamic `import()` and `import("...")` types. */
const RELATIVE_SPECIFIER =
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*|\.{1,2})\2/g;

/**
 * The explicit form of `specifier`, written in the file `fromFile` of an ES module build:
 * `./x` becomes `./x.js` when `x.js` (or `x.d.ts`) exists, `./x/index.js` when `x` is a folder
 * with an index. Specifiers that already end in `.js` are kept. Throws when neither exists, so a
 * broken build stops the build instead of failing in a user's app.
 */
function explicitSpecifier(specifier, fromFile, exists = fs.existsSync) {
  if (specifier.endsWith('.js') || specifier.endsWith('.json')) return specifier;
  const base = path.resolve(path.dirname(fromFile), specifier);
  const typings = fromFile.endsWith('.d.ts');
  const file = (stem) => (typings ? `${stem}.d.ts` : `${stem}.js`);
  if (exists(file(base))) return `${specifier}.js`;
  if (exists(file(path.join(base, 'index')))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${fromFile}: cannot resolve '${specifier}' to a file of the build`);
}

/** `code` of the file `fromFile` with every relative specifier made explicit. */
function rewriteSpecifiers(code, fromFile, exists = fs.existsSync) {
  return code.replace(
    RELATIVE_SPECIFIER,
    (_match, keyword, quote, specifier) =>
      `${keyword}${quote}${explicitSpecifier(specifier, fromFile, exists)}${quote}`,
  );
}

/**
 * Loading an optional peer with `require()` (e.g. class-validator) works in CommonJS only; the ES
 * module build gets a module-local `require` made by Node's `createRequire`, which resolves from
 * the package's own location exactly like the CommonJS build does.
 */
function addRequireShim(code) {
  if (!/\brequire\(/.test(code)) return code;
  return (
    "import { createRequire as __createRequire } from 'node:module';\n" +
    'const require = __createRequire(import.meta.url);\n' +
    code
  );
}

module.exports = { explicitSpecifier, rewriteSpecifiers, addRequireShim };
