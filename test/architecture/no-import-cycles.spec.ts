import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';

/**
 * lib/ has no import cycles: no two source files that import each other, directly or through
 * others, and no two of its top-level folders (its layers: common, transaction, events, relay,
 * consumer, ...) that do. Type-only imports count too (a cycle of types is a cycle of design),
 * as do `export ... from` and `require()`. The graph is read with TypeScript's own parser and
 * module resolution, so the check needs no dependency; `npx madge --circular --extensions ts lib`
 * finds the same file cycles.
 */
const LIB = join(__dirname, '..', '..', 'lib');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Each lib/ file (relative to lib/, with '/') and the lib/ files it imports. */
function importGraph(): Map<string, Set<string>> {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.CommonJS, allowJs: false };
  const name = (file: string) => relative(LIB, file).split(sep).join('/');
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(LIB)) {
    const imported = new Set<string>();
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
      if (!resolved) throw new Error(`${name(file)}: cannot resolve '${fileName}'`);
      const target = relative(LIB, resolved.resolvedFileName);
      if (!target.startsWith('..') && !target.endsWith('.d.ts'))
        imported.add(name(resolved.resolvedFileName));
    }
    graph.set(name(file), imported);
  }
  return graph;
}

/** The strongly connected components with more than one member (or a self-import): the cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== node);
    if (members.length > 1 || graph.get(node)?.has(node)) found.push(members.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/**
 * Folders whose sub-folders are layers of their own: telemetry's tracing (below the publisher,
 * the consumer and the write side, which call it on their hot paths) and its metrics (above the
 * relay and the consumer, whose counters it reads).
 */
const LAYERED_FOLDERS = ['telemetry'];

/** The graph of lib/'s top-level folders (a file directly in lib/ is its own node). */
function folderGraph(files: Map<string, Set<string>>): Map<string, Set<string>> {
  const folder = (file: string) => {
    const parts = file.split('/');
    return LAYERED_FOLDERS.includes(parts[0]) ? parts.slice(0, 2).join('/') : parts[0];
  };
  const graph = new Map<string, Set<string>>();
  for (const [file, imported] of files) {
    const from = folder(file);
    const edges = graph.get(from) ?? new Set<string>();
    for (const target of imported.values()) {
      const to = folder(target);
      if (to !== from) edges.add(to);
    }
    graph.set(from, edges);
  }
  return graph;
}

const sorted = (list: string[][]) => list.map((c) => c.join(' <-> ')).sort();

describe('lib/ has no import cycles', () => {
  const files = importGraph();

  it('reads the whole of lib/ (the check sees every source file and its imports)', () => {
    expect(files.size).toBeGreaterThan(200);
    expect(files.get('relay/outbox.relay.ts')?.size).toBeGreaterThan(0);
  });

  it('between its files', () => {
    expect(sorted(cycles(files))).toEqual([]);
  });

  it('between its top-level folders', () => {
    expect(sorted(cycles(folderGraph(files)))).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([
      ['a.ts', new Set(['b.ts'])],
      ['b.ts', new Set(['c.ts'])],
      ['c.ts', new Set(['a.ts'])],
      ['d.ts', new Set(['a.ts', 'd.ts'])],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });
});
