import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * The relative links of the README, the docs/ pages and CONTRIBUTING.md lead somewhere: to a
 * file or folder of the repository, and, with `#anchor`, to a heading of that Markdown file (as
 * GitHub names headings' anchors).
 */
const root = join(__dirname, '..', '..');

const { docFiles, fences } = require('../../scripts/compat/doc-blocks') as {
  docFiles(root: string): string[];
  fences(text: string): Array<{ line: number; code: string; closed: boolean }>;
};

const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The text outside fenced code blocks and inline code, line by line (1-based numbers). */
function prose(text: string): Array<{ line: number; text: string }> {
  const inFence = new Set<number>();
  for (const block of fences(text)) {
    const lines = block.code.split('\n').length - 1;
    for (let i = 0; i <= lines + (block.closed ? 1 : 0); i++) inFence.add(block.line + i);
  }
  return text
    .split('\n')
    .map((line, i) => ({ line: i + 1, text: line.replace(/`[^`]*`/g, '``') }))
    .filter(({ line }) => !inFence.has(line));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text } of prose(read(file).replace(/`([^`]*)`/g, '$1'))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const { line, text } of prose(read(file))) {
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      const where = `${file}:${line}: ${target}`;
      if (resolved.startsWith('..') || !existsSync(join(root, resolved))) {
        broken.push(`${where}: no ${resolved}`);
      } else if (anchor !== undefined) {
        if (statSync(join(root, resolved)).isDirectory() || !resolved.endsWith('.md')) {
          broken.push(`${where}: an anchor into something that is not a Markdown file`);
        } else if (!anchors(resolved).has(anchor)) {
          broken.push(`${where}: ${resolved} has no heading #${anchor}`);
        }
      }
    }
  }
  return broken;
}

describe('links of the README, docs/ and CONTRIBUTING.md', () => {
  it('finds the headings as GitHub names them', () => {
    expect(slug("The repository's demo")).toBe('the-repositorys-demo');
    expect(slug('Why: the dual-write problem')).toBe('why-the-dual-write-problem');
    expect(slug('@Transactional()')).toBe('transactional');
    expect([...anchors('README.md')]).toEqual(
      expect.arrayContaining(['quick-start', 'the-repositorys-demo']),
    );
  });

  it('every relative link leads to a file, and every anchor to a heading of it', () => {
    const files = [...docFiles(root), 'CONTRIBUTING.md'];
    expect(files.length).toBeGreaterThan(2);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });
});
