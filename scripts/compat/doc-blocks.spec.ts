const { blockName, tsBlocks, uncompiledExamples } = require('./doc-blocks') as {
  blockName(file: string, line: number): string;
  tsBlocks(text: string): Array<{ line: number; code: string }>;
  uncompiledExamples(text: string): Array<{ line: number; fence: string; reason: string }>;
};

/** How the README test and the compatibility check read the documentation's examples. */
describe('documentation examples', () => {
  const page = [
    '# Page', //                       1
    '',
    '```ts', //                        3
    "import { x } from 'y';",
    '```',
    '',
    '```bash', //                      7
    'npm test',
    '```',
    '',
    '```typescript', //               11
    'const a = 1;',
    '```',
    '',
    '- a list item:',
    '',
    '  ```ts', //                     17
    '  const b = 2;',
    '  ```',
    '',
    '```ts title="x.ts"', //          21
    'const c = 3;',
    '```',
    '',
    '```ts', //                       25
    'const d = 4;',
  ].join('\n');

  it('takes the ```ts blocks at the start of a line, with their code and opening line', () => {
    expect(tsBlocks(page)).toEqual([{ line: 3, code: "import { x } from 'y';\n" }]);
  });

  it('lists every other way of writing a TypeScript example, which would not be compiled', () => {
    expect(uncompiledExamples(page)).toEqual([
      { line: 11, fence: '```typescript', reason: 'not written as ```ts at the start of a line' },
      { line: 17, fence: '  ```ts', reason: 'not written as ```ts at the start of a line' },
      {
        line: 21,
        fence: '```ts title="x.ts"',
        reason: 'not written as ```ts at the start of a line',
      },
      { line: 25, fence: '```ts', reason: 'never closed' },
    ]);
  });

  it('reads a block in the same way as the regular expression the check used before docs/', () => {
    const readme =
      '# R\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\ntext\n\n```ts\nlet c;\n```\n';
    const before = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    expect(tsBlocks(readme).map((block) => block.code)).toEqual(before);
  });

  it('names a block after its file and line', () => {
    expect(blockName('README.md', 86)).toBe('readme-line-86');
    expect(blockName('docs/testing.md', 14)).toBe('docs-testing-line-14');
    expect(blockName('docs/guides/two-databases.md', 3)).toBe('docs-guides-two-databases-line-3');
  });
});
