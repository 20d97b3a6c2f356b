import { join } from 'node:path';

const { addRequireShim, explicitSpecifier, rewriteSpecifiers } = require('./esm-specifiers') as {
  addRequireShim(code: string): string;
  explicitSpecifier(specifier: string, fromFile: string, exists: (f: string) => boolean): string;
  rewriteSpecifiers(code: string, fromFile: string, exists: (f: string) => boolean): string;
};

/** The ES module build's relative specifiers, made explicit from the files the compiler wrote. */
const dir = join('/', 'pkg', 'dist', 'esm');
const files = new Set([
  join(dir, 'index.js'),
  join(dir, 'index.d.ts'),
  join(dir, 'outbox.module.js'),
  join(dir, 'outbox.module.d.ts'),
  join(dir, 'common', 'index.js'),
  join(dir, 'common', 'index.d.ts'),
  join(dir, 'common', 'envelope.js'),
]);
const exists = (file: string) => files.has(file);

describe('ES module build specifiers', () => {
  it('points a file import at its .js and a folder import at its index.js', () => {
    const from = join(dir, 'index.js');
    expect(explicitSpecifier('./outbox.module', from, exists)).toBe('./outbox.module.js');
    expect(explicitSpecifier('./common', from, exists)).toBe('./common/index.js');
    expect(explicitSpecifier('../esm/common/', from, exists)).toBe('../esm/common/index.js');
    expect(explicitSpecifier('./common/envelope.js', from, exists)).toBe('./common/envelope.js');
  });

  it('looks for declaration files when rewriting a .d.ts', () => {
    const from = join(dir, 'index.d.ts');
    expect(explicitSpecifier('./common', from, exists)).toBe('./common/index.js');
    expect(() => explicitSpecifier('./common/envelope', from, exists)).toThrow(
      /cannot resolve '\.\/common\/envelope'/,
    );
  });

  it('rewrites static, re-export, side-effect, dynamic and type imports; leaves packages alone', () => {
    const code = [
      "import { Module } from '@nestjs/common';",
      "export * from './common';",
      'import { x } from "./outbox.module";',
      "import './common';",
      "const m = await import('./outbox.module');",
      "type T = import('./common').X;",
    ].join('\n');
    expect(rewriteSpecifiers(code, join(dir, 'index.js'), exists).split('\n')).toEqual([
      "import { Module } from '@nestjs/common';",
      "export * from './common/index.js';",
      'import { x } from "./outbox.module.js";',
      "import './common/index.js';",
      "const m = await import('./outbox.module.js');",
      "type T = import('./common/index.js').X;",
    ]);
  });

  it('fails the build on a specifier that names no file of the build', () => {
    expect(() =>
      rewriteSpecifiers("export * from './gone';", join(dir, 'index.js'), exists),
    ).toThrow(/index\.js: cannot resolve '\.\/gone'/);
  });

  it('gives modules that call require() a module-local one', () => {
    expect(addRequireShim('export const a = 1;')).toBe('export const a = 1;');
    const shimmed = addRequireShim("const v = require('class-validator');");
    expect(shimmed).toMatch(/^import \{ createRequire as __createRequire \} from 'node:module';\n/);
    expect(shimmed).toContain('const require = __createRequire(import.meta.url);');
  });
});
