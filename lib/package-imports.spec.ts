import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The library imports other packages by their public entry points only ('@nestjs/common', not
 * '@nestjs/common/constants'): a file path inside a package is its internals, may move in any
 * release, and does not even resolve from our ES module build when the package has no exports
 * map listing it (NestJS 11). Mongoose's one internal the library needs has no import: see
 * transaction/mongoose-transaction-storage.ts.
 */
const KNOWN_DEEP_IMPORTS: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

/** `'pkg/sub/path'` or `'@scope/pkg/sub/path'`, the specifiers that reach into a package. */
function isDeep(specifier: string): boolean {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return false;
  return specifier.split('/').length > (specifier.startsWith('@') ? 2 : 1);
}

describe('imports of other packages', () => {
  it('go through public entry points', () => {
    const deep: string[] = [];
    for (const file of sourceFiles(__dirname)) {
      const code = readFileSync(file, 'utf8');
      for (const match of code.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)) {
        const specifier = match[1];
        const where = relative(__dirname, file);
        if (isDeep(specifier) && KNOWN_DEEP_IMPORTS[specifier] !== where) {
          deep.push(`${where}: '${specifier}'`);
        }
      }
    }
    expect(deep).toEqual([]);
  });
});
