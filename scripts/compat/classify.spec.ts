const { engineWarnings, peerWarnings, readmeBlockKind } = require('./classify') as {
  engineWarnings(output: string, own: string): { ours: string[]; thirdParty: string[] };
  peerWarnings(output: string): string[];
  readmeBlockKind(code: string): 'vitest test' | 'test' | 'code';
};

/** How the compatibility check reads npm's warnings and the README's blocks. */
describe('compatibility check: npm output', () => {
  // As npm 11 prints them (`npm ci` of nest12-vitest on Node.js 20.20.2).
  const ebadengine = (spec: string) =>
    [
      'npm warn EBADENGINE Unsupported engine {',
      `npm warn EBADENGINE   package: '${spec}',`,
      "npm warn EBADENGINE   required: { node: '>=22' },",
      "npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }",
      'npm warn EBADENGINE }',
    ].join('\n');

  it('lists third-party EBADENGINE packages once each, apart from our own package', () => {
    const output = [
      ebadengine('file-type@22.3.0'),
      'added 250 packages in 30s',
      ebadengine('file-type@22.3.0'),
      ebadengine('nestjs-outbox@0.1.0'),
    ].join('\n');
    expect(engineWarnings(output, 'nestjs-outbox')).toEqual({
      ours: ['nestjs-outbox@0.1.0'],
      thirdParty: ['file-type@22.3.0'],
    });
  });

  it('does not take a package whose name starts like ours for ours', () => {
    expect(engineWarnings(ebadengine('nestjs-outbox-extra@1.0.0'), 'nestjs-outbox')).toEqual({
      ours: [],
      thirdParty: ['nestjs-outbox-extra@1.0.0'],
    });
  });

  it('finds peer warnings, and an engine warning is not one', () => {
    const peer = [
      'npm warn ERESOLVE overriding peer dependency',
      'npm warn While resolving: nestjs-outbox@0.1.0',
    ];
    expect(peerWarnings([...peer, ebadengine('file-type@22.3.0')].join('\n'))).toEqual(peer);
    expect(peerWarnings(ebadengine('file-type@22.3.0'))).toEqual([]);
  });
});

describe('compatibility check: README blocks', () => {
  it('tells Vitest test files, test files on globals, and code apart', () => {
    expect(
      readmeBlockKind("import { describe, it } from 'vitest';\n\ndescribe('x', () => {});\n"),
    ).toBe('vitest test');
    expect(
      readmeBlockKind("import { Test } from '@nestjs/testing';\n\ndescribe('x', () => {});\n"),
    ).toBe('test');
    expect(
      readmeBlockKind('export async function run() {\n  // describe(...) in a comment\n}\n'),
    ).toBe('code');
  });
});
