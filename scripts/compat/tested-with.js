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
  ['Jest', 'jest'],
];

/**
 * The table, one row per stack: `{ name, moduleType: 'CommonJS' | 'ES module', versions }` with
 * `versions` mapping package names to the installed versions, and the Node.js major of the run.
 */
function renderTestedWith(stacks, nodeMajor) {
  const header = ['app', ...COLUMNS.map(([title]) => title), 'Node.js'];
  const rows = stacks.map((stack) => [
    `${stack.moduleType} (\`test/compat/stacks/${stack.name}\`)`,
    ...COLUMNS.map(([, pkg]) => stack.versions[pkg] ?? '?'),
    String(nodeMajor),
  ]);
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
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
