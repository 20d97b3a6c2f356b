const { END, START, renderTestedWith, withTestedWith } = require('./tested-with') as {
  START: string;
  END: string;
  renderTestedWith(
    stacks: Array<{ name: string; moduleType: string; versions: Record<string, string> }>,
    nodeMajor: string,
  ): string;
  withTestedWith(readme: string, table: string): string;
};

/** The README's "Tested with" table is made from what the compatibility check installed. */
describe('"Tested with" table', () => {
  const stack = {
    name: 'nest11-cjs',
    moduleType: 'CommonJS',
    versions: {
      '@nestjs/core': '11.2.10',
      '@nestjs/microservices': '11.2.6',
      '@nestjs/mongoose': '11.0.4',
      mongoose: '8.5.2',
      kafkajs: '2.2.4',
      typescript: '5.9.3',
      jest: '30.5.2',
    },
  };

  it('has one row per stack with the installed versions and the Node.js major', () => {
    expect(renderTestedWith([stack], '20').split('\n')).toEqual([
      '| app | NestJS | @nestjs/microservices | @nestjs/mongoose | mongoose | kafkajs | TypeScript | Jest | Node.js |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| CommonJS (`test/compat/stacks/nest11-cjs`) | 11.2.10 | 11.2.6 | 11.0.4 | 8.5.2 | 2.2.4 | 5.9.3 | 30.5.2 | 20 |',
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
