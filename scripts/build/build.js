#!/usr/bin/env node
'use strict';
/**
 * `npm run build`: the package in two formats from the same sources, each with its typings:
 *   dist/cjs  CommonJS, for `require('nestjs-outbox')` (NestJS 11 apps, Jest in CommonJS mode);
 *   dist/esm  ES modules, for `import` (ESM apps, e.g. NestJS 12 ones, Jest or Vitest in ESM mode).
 * package.json's `exports` map sends each kind of app to its format (see CONTRIBUTING.md, "Build").
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { addRequireShim, rewriteSpecifiers } = require('./esm-specifiers');

const root = path.join(__dirname, '..', '..');
const dist = path.join(root, 'dist');
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });

function compile(project) {
  execFileSync(process.execPath, [tsc, '-p', path.join(root, project)], { stdio: 'inherit' });
}

function filesUnder(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

fs.rmSync(dist, { recursive: true, force: true });
compile('tsconfig.build.json');
compile('tsconfig.build.esm.json');

// The package itself has no "type": each folder says how Node must read its .js files.
fs.writeFileSync(path.join(dist, 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
fs.writeFileSync(path.join(dist, 'esm', 'package.json'), '{ "type": "module" }\n');

for (const file of filesUnder(path.join(dist, 'esm'))) {
  if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
  const code = fs.readFileSync(file, 'utf8');
  let next = rewriteSpecifiers(code, file);
  if (file.endsWith('.js')) next = addRequireShim(next);
  if (next !== code) fs.writeFileSync(file, next);
}
