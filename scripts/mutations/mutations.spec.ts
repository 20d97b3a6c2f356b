import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MUTATIONS, applyEdits, occurrences } from './mutations';

const ROOT = join(__dirname, '..', '..');

/**
 * The list of `npm run mutations` stays applicable: a refactor that moves or rewrites the code
 * a mutation targets fails here (in `npm test`), not only in the slower mutation run.
 */
describe('the mutations of npm run mutations', () => {
  it('have unique ids, a lib/ file, edits and checks', () => {
    expect(new Set(MUTATIONS.map((mutation) => mutation.id)).size).toBe(MUTATIONS.length);
    for (const mutation of MUTATIONS) {
      expect(mutation.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(mutation.file).toMatch(/^lib\/.+\.ts$/);
      expect(mutation.file).not.toMatch(/\.spec\.ts$/);
      expect(mutation.edits.length).toBeGreaterThan(0);
      expect(mutation.checks.length).toBeGreaterThan(0);
      for (const check of mutation.checks) {
        if (check === 'simulation') continue;
        for (const file of check.jest)
          expect({ file, exists: existsSync(join(ROOT, file)) }).toEqual({ file, exists: true });
      }
    }
  });

  it.each(MUTATIONS.map((mutation) => [mutation.id, mutation] as const))(
    '%s: each anchor is found exactly once and the edit changes the file',
    (_id, mutation) => {
      const text = readFileSync(join(ROOT, mutation.file), 'utf8');
      const applied = applyEdits(mutation, text);
      expect(applied).not.toHaveProperty('broken');
      expect((applied as { text: string }).text).not.toBe(text);
    },
  );

  it('applyEdits refuses an anchor found twice or not at all', () => {
    const mutation = {
      id: 'x',
      description: '',
      file: 'lib/x.ts',
      edits: [{ find: 'a;', replace: 'b;' }],
      checks: ['simulation' as const],
    };
    expect(occurrences('a; a;', 'a;')).toBe(2);
    expect(applyEdits(mutation, 'a; a;')).toHaveProperty('broken');
    expect(applyEdits(mutation, 'c;')).toHaveProperty('broken');
    expect(applyEdits(mutation, 'x a; y')).toEqual({ text: 'x b; y' });
  });
});
