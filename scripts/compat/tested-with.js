'use strict';
// The README's "Tested with" table, generated from the versions the compatibility check installed.
const START = '<!-- tested-with:start (written by `npm run compat -- --update-readme`) -->';
const END = '<!-- tested-with:end -->';

/** Packages whose installed versions the table shows, in its column order. */
const COLUMNS = [
  ['NestJS', '@nestjs/core'],
  ['@nestjs/microservices', '@nestjs/microservices'],
  ['@nestjs/mongoose', '@nestjs/mongoose'],
  ['mongoose', 'mongoose'],
  ['kafkajs', 'kafkajs'],
  ['TypeScript', 'typescript'],
];

const RUNNERS = { jest: 'Jest', vitest: 'Vitest' };

/**
 * The table and its notes, from the compatibility check's runs: each
 * `{ name, moduleType: 'CommonJS' | 'ES module', runner: 'jest' | 'vitest', node, versions,
 * engineWarnings }` (`versions` maps package names to the installed versions, `node` is the
 * Node.js version of the run, `engineWarnings` the third-party packages npm warned EBADENGINE
 * about). One row per stack and set of installed versions, listing the Node.js versions it ran
 * on; then one line per Node.js version with EBADENGINE warnings.
 */
function renderTestedWith(runs) {
  const header = ['app', ...COLUMNS.map(([title]) => title), 'tests', 'Node.js'];
  const rows = new Map();
  for (const run of runs) {
    const cells = [
      `${run.moduleType}, ${RUNNERS[run.runner]} (\`test/compat/stacks/${run.name}\`)`,
      ...COLUMNS.map(([, pkg]) => run.versions[pkg] ?? '?'),
      `${RUNNERS[run.runner]} ${run.versions[run.runner] ?? '?'}`,
    ];
    const key = cells.join('|');
    rows.set(key, { cells, nodes: [...(rows.get(key)?.nodes ?? []), run.node] });
  }
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const table = [
    line(header),
    line(header.map(() => '---')),
    ...[...rows.values()].map(({ cells, nodes }) => line([...cells, nodes.join(', ')])),
  ];
  return [...table, ...engineNotes(runs)].join('\n');
}

/** "On Node.js 20.20.2, npm warns EBADENGINE for `a@1` (stack-a, stack-b), ..." per version. */
function engineNotes(runs) {
  const byNode = new Map();
  for (const run of runs) {
    for (const spec of run.engineWarnings ?? []) {
      const packages = byNode.get(run.node) ?? new Map();
      packages.set(spec, [...(packages.get(spec) ?? []), run.name]);
      byNode.set(run.node, packages);
    }
  }
  if (byNode.size === 0) return [];
  const notes = [...byNode].map(([node, packages]) => {
    const listed = [...packages].map(([spec, stacks]) => `\`${spec}\` (${stacks.join(', ')})`);
    return `On Node.js ${node}, npm warns EBADENGINE (their \`engines\` ask for a newer Node.js; a warning, not a peer conflict) for ${listed.join(', ')}.`;
  });
  return ['', ...notes];
}

/** `readme` with the text between the markers replaced by `table`; throws without markers. */
function withTestedWith(readme, table) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`README.md has no "Tested with" markers (${START} ... ${END})`);
  }
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

module.exports = { COLUMNS, END, START, renderTestedWith, withTestedWith };
