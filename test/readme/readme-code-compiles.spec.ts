import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Every ```ts block of the README and of the docs/ pages type-checks against the library as it
 * is, imported as a user would (`from 'nestjs-outbox'`), with the project's compiler options, and
 * no TypeScript example is written in a way that escapes the check. Their test files (Vitest and
 * Jest) are also compiled and run by `npm run compat` in the apps of test/compat/stacks, which
 * reads the blocks with the same code (scripts/compat/doc-blocks.js).
 */
const root = join(__dirname, '..', '..');

const { docFiles, tsBlocks, uncompiledExamples } = require('../../scripts/compat/doc-blocks') as {
  docFiles(root: string): string[];
  tsBlocks(text: string): Array<{ line: number; code: string }>;
  uncompiledExamples(text: string): Array<{ line: number; fence: string; reason: string }>;
};

interface Block {
  file: string;
  line: number;
  code: string;
}

const read = (file: string) => readFileSync(join(root, file), 'utf8');

function docBlocks(): Block[] {
  return docFiles(root).flatMap((file) =>
    tsBlocks(read(file)).map((block) => ({ file, ...block })),
  );
}

describe('README and docs/', () => {
  it('reads README.md and every page under docs/', () => {
    const files = docFiles(root);
    expect(files[0]).toBe('README.md');
    expect(files).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/testing.md']));
  });

  it('has TypeScript examples in the README (the quick start) and in docs/', () => {
    const blocks = docBlocks();
    expect(blocks.filter((block) => block.file === 'README.md').length).toBeGreaterThanOrEqual(1);
    expect(blocks.filter((block) => block.file !== 'README.md').length).toBeGreaterThanOrEqual(5);
  });

  it('writes every TypeScript example as a ```ts block, so that it is compiled', () => {
    const escaping = docFiles(root).flatMap((file) =>
      uncompiledExamples(read(file)).map(
        ({ line, fence, reason }) => `${file}:${line}: ${fence}: ${reason}`,
      ),
    );
    expect(escaping).toEqual([]);
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
        'nestjs-outbox/console': ['lib/console/index.ts'],
        // The Vitest test files: their runner's API as Jest's types (see vitest.d.ts).
        vitest: ['test/readme/vitest.d.ts'],
      },
    };
    const virtual = new Map<string, Block>();
    docBlocks().forEach((block, i) =>
      virtual.set(join(root, 'test', 'readme', `__doc_block_${i + 1}.ts`), block),
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
        return `${block.file}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  });
});
