/** Unit specs live next to the code (lib/**\/*.spec.ts); integration and e2e specs under test/. */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
};
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  reporters: ['default', '<rootDir>/test/harness/skip-reporter.js'],
  // Integration tests talk to real servers (a global option: Jest ignores it per project).
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/lib/**/*.spec.ts',
        '<rootDir>/scripts/**/*.spec.ts',
        // The test harness's own pieces (the Kafka fault proxy) need no server either.
        '<rootDir>/test/harness/**/*.spec.ts',
        // The contract suites on the simulated ports need no server.
        '<rootDir>/test/contracts/*.sim.spec.ts',
      ],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
      // The compatibility apps run with their own Jest, in their own install (npm run compat).
      testPathIgnorePatterns: [
        '/node_modules/',
        '<rootDir>/test/compat/',
        '<rootDir>/test/harness/',
        '<rootDir>/test/contracts/[^/]*\\.sim\\.spec\\.ts$',
      ],
    },
  ],
};
