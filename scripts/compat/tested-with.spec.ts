const { END, START, renderTestedWith, withTestedWith } = require('./tested-with') as {
  START: string;
  END: string;
  renderTestedWith(
    runs: Array<{
      name: string;
      moduleType: string;
      runner: 'jest' | 'vitest';
      node: string;
      versions: Record<string, string>;
      engineWarnings: string[];
    }>,
  ): string;
  withTestedWith(readme: string, table: string): string;
};

/** The README's "Tested with" table is made from what the compatibility check installed. */
describe('"Tested with" table', () => {
  const cjs = {
    name: 'nest11-cjs',
    moduleType: 'CommonJS',
    runner: 'jest' as const,
    versions: {
      '@nestjs/core': '11.2.10',
      '@nestjs/microservices': '11.2.6',
      '@nestjs/mongoose': '11.0.4',
      mongoose: '8.5.2',
      kafkajs: '2.2.4',
      typescript: '5.9.3',
      jest: '30.5.2',
    },
    engineWarnings: [],
  };
  const vitest = {
    name: 'nest12-vitest',
    moduleType: 'ES module',
    runner: 'vitest' as const,
    versions: {
      '@nestjs/core': '12.5.1',
      '@nestjs/microservices': '12.1.1',
      '@nestjs/mongoose': '12.0.0',
      mongoose: '9.12.1',
      kafkajs: '2.2.4',
      typescript: '6.0.3',
      vitest: '4.1.12',
    },
    engineWarnings: [],
  };
  const header = [
    '| app | NestJS | @nestjs/microservices | @nestjs/mongoose | mongoose | kafkajs | TypeScript | tests | Node.js |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];

  it('has one row per stack with the installed versions, its test runner and the Node.js versions it ran on', () => {
    const table = renderTestedWith([
      { ...cjs, node: '20.20.2' },
      { ...cjs, node: '22.23.5' },
      { ...vitest, node: '22.23.5' },
      { ...vitest, node: '24.22.3' },
    ]);
    expect(table.split('\n')).toEqual([
      ...header,
      '| CommonJS, Jest (`test/compat/stacks/nest11-cjs`) | 11.2.10 | 11.2.6 | 11.0.4 | 8.5.2 | 2.2.4 | 5.9.3 | Jest 30.5.2 | 20.20.2, 22.23.5 |',
      '| ES module, Vitest (`test/compat/stacks/nest12-vitest`) | 12.5.1 | 12.1.1 | 12.0.0 | 9.12.1 | 2.2.4 | 6.0.3 | Vitest 4.1.12 | 22.23.5, 24.22.3 |',
    ]);
  });

  it('gives a stack a row per set of installed versions when they differ between Node.js versions', () => {
    const other = { ...cjs.versions, typescript: '5.9.2' };
    const rows = renderTestedWith([
      { ...cjs, node: '20.20.2' },
      { ...cjs, node: '24.22.3', versions: other },
    ])
      .split('\n')
      .slice(2);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/\| 5\.9\.3 \| Jest 30\.5\.2 \| 20\.20\.2 \|$/);
    expect(rows[1]).toMatch(/\| 5\.9\.2 \| Jest 30\.5\.2 \| 24\.22\.3 \|$/);
  });

  it('names the third-party packages npm warned EBADENGINE about, per Node.js version, after the table', () => {
    const lines = renderTestedWith([
      { ...cjs, node: '20.20.2' },
      { ...vitest, node: '20.20.2', engineWarnings: ['@nestjs/core@12.5.1', 'file-type@22.0.0'] },
      { ...vitest, node: '24.22.3' },
    ]).split('\n');
    expect(lines.slice(4)).toEqual([
      '',
      'On Node.js 20.20.2, npm warns EBADENGINE (their `engines` ask for a newer Node.js; a warning, not a peer conflict) for `@nestjs/core@12.5.1` (nest12-vitest), `file-type@22.0.0` (nest12-vitest).',
    ]);
  });

  it('replaces only what lies between the markers', () => {
    const readme = `# x\n${START}\nold table\n${END}\nrest\n`;
    expect(withTestedWith(readme, 'new table')).toBe(`# x\n${START}\nnew table\n${END}\nrest\n`);
  });

  it('refuses a README without the markers', () => {
    expect(() => withTestedWith('# x\n', 'table')).toThrow(/no "Tested with" markers/);
  });
});
