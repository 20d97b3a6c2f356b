import { OptionChecker, type OptionKeys } from './option.checker';

class TestOptionError extends Error {
  constructor(
    readonly option: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${option}: ${problem}. ${fix}`);
  }
}

const checker = new OptionChecker('relay.', (option, problem, fix) => {
  throw new TestOptionError(option, problem, fix);
});

function errorOf(run: () => unknown): TestOptionError {
  try {
    run();
  } catch (error) {
    if (error instanceof TestOptionError) return error;
    throw error;
  }
  throw new Error('expected a TestOptionError');
}

interface Lease {
  enabled?: boolean;
  durationMs?: number;
}
const LEASE_KEYS = { enabled: true, durationMs: true } as const satisfies OptionKeys<Lease>;

describe('OptionChecker', () => {
  it('names an unknown key by its full path and suggests the closest known one', () => {
    const error = errorOf(() => checker.object<Lease>('lease', { duratonMs: 5 }, LEASE_KEYS));
    expect(error.option).toBe('relay.lease.duratonMs');
    expect(error.fix).toBe(
      'Did you mean "relay.lease.durationMs"? Known options of relay.lease: enabled, durationMs.',
    );
  });

  it('names the section itself when it is not an object', () => {
    expect(errorOf(() => checker.object('', 5, LEASE_KEYS)).option).toBe('relay');
    expect(errorOf(() => checker.at('lease').object('', [], LEASE_KEYS)).option).toBe(
      'relay.lease',
    );
    expect(checker.object('lease', undefined, LEASE_KEYS)).toEqual({});
  });

  it('takes the fallback for undefined and refuses integers out of range, fractions and strings', () => {
    const range = { min: 10, max: 100 };
    expect(checker.int('idleMs', undefined, 50, range)).toBe(50);
    expect(checker.int('idleMs', 10, 50, range)).toBe(10);
    for (const bad of [9, 101, 10.5, '20', Number.NaN]) {
      const error = errorOf(() => checker.durationMs('idleMs', bad, 50, range));
      expect(error.option).toBe('relay.idleMs');
      expect(error.problem).toMatch(/^expected an integer from 10 to 100 \(ms\), got /);
      expect(error.fix).toBe('Omit it for the default (50).');
    }
    expect(errorOf(() => checker.int('n', 0, 1, { min: 1 })).problem).toBe(
      'expected an integer >= 1, got 0',
    );
  });

  it('checks booleans, numbers, choices, strings and functions', () => {
    expect(errorOf(() => checker.bool('autoStart', 'yes', true)).problem).toBe(
      'expected true or false, got "yes"',
    );
    expect(errorOf(() => checker.number('jitter', 2, 0.2, 0, 1)).option).toBe('relay.jitter');
    expect(checker.oneOf('compression', 'gzip', ['none', 'gzip'], 'fix')).toBe('gzip');
    expect(
      errorOf(() => checker.oneOf('compression', 'zstd', ['none', 'gzip'], 'fix')).problem,
    ).toBe('expected "none" or "gzip", got "zstd"');
    expect(checker.text('name', ' ', 'd', 'fix')).toBe(' ');
    expect(errorOf(() => checker.text('name', ' ', 'd', 'fix', true)).option).toBe('relay.name');
    expect(errorOf(() => checker.text('name', '', 'd', 'fix')).option).toBe('relay.name');
    expect(errorOf(() => checker.fn('topic', 'orders', 'fix')).problem).toBe(
      'expected a function, got "orders"',
    );
  });
});
