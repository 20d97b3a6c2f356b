// What the Vitest test files of the README and docs/ import from 'vitest', typed as Jest's
// globals (the same shapes), so that readme-code-compiles.spec.ts checks their use of this library
// without Vitest installed here. `npm run compat` compiles and runs them with the real Vitest
// (test/compat/stacks/nest12-vitest).
export declare const describe: jest.Describe;
export declare const it: jest.It;
export declare const expect: jest.Expect;
export declare const beforeAll: jest.Lifecycle;
export declare const beforeEach: jest.Lifecycle;
export declare const afterAll: jest.Lifecycle;
export declare const afterEach: jest.Lifecycle;
