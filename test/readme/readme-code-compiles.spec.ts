import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Every ```ts block of the README type-checks against the library as it is, imported as a user
 * would (`from 'nestjs-outbox'`), with the project's compiler options. Its test files (Vitest and
 * Jest) are also compiled and run by `npm run compat` in the apps of test/compat/stacks.
 */
const root = join(__dirname, '..', '..');

function readmeBlocks(): Array<{ line: number; code: string }> {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks: Array<{ line: number; code: string }> = [];
  const fence = /^```ts\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(text); match; match = fence.exec(text)) {
    blocks.push({ line: text.slice(0, match.index).split('\n').length, code: match[1] });
  }
  return blocks;
}

describe('README', () => {
  it('has TypeScript examples', () => {
    expect(readmeBlocks().length).toBeGreaterThanOrEqual(5);
  });

  it('every TypeScript block compiles against the library', () => {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const options: ts.CompilerOptions = {
      ...parsed.options,
      noEmit: true,
      baseUrl: root,
      paths: {
        'nestjs-outbox': ['lib/index.ts'],
        'nestjs-outbox/testing': ['lib/testing/index.ts'],
        // The Vitest test files: their runner's API as Jest's types (see vitest.d.ts).
        vitest: ['test/readme/vitest.d.ts'],
      },
    };
    const virtual = new Map<string, { line: number; code: string }>();
    readmeBlocks().forEach((block, i) =>
      virtual.set(join(root, 'test', 'readme', `__readme_block_${i + 1}.ts`), block),
    );
    const host = ts.createCompilerHost(options);
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
    host.readFile = (file) => virtual.get(file)?.code ?? readFile.call(host, file);
    host.getSourceFile = (file, language, ...rest) => {
      const block = virtual.get(file);
      return block
        ? ts.createSourceFile(file, block.code, language)
        : getSourceFile.call(host, file, language, ...rest);
    };
    const program = ts.createProgram([...virtual.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && virtual.has(d.file.fileName))
      .map((d) => {
        const block = virtual.get(d.file!.fileName)!;
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `README.md:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  });
});
