import { OutboxConsoleOptionsError, resolveConsoleOptions } from './console.options';

const secret = () => Buffer.alloc(32, 1);

describe('console options', () => {
  it('refuse to start without authorize or guards', () => {
    expect(() => resolveConsoleOptions({}, secret)).toThrow(OutboxConsoleOptionsError);
    expect(() => resolveConsoleOptions({ guards: [] }, secret)).toThrow(/authorize is required/);
  });

  it('are read-only by default and keep the path without slashes', () => {
    const options = resolveConsoleOptions({ authorize: () => 'ann', path: '/ops/outbox/' }, secret);
    expect(options).toMatchObject({
      actions: false,
      path: 'ops/outbox',
      countLimit: 10_000,
      pageSize: 50,
    });
    expect(options.secret).toEqual(secret());
  });

  it('refuse a bad path, a short secret, a bad redact and out-of-range numbers', () => {
    const authorize = () => 'ann';
    expect(() => resolveConsoleOptions({ authorize, path: 'a b' }, secret)).toThrow(/path/);
    expect(() => resolveConsoleOptions({ authorize, secret: 'short' }, secret)).toThrow(/secret/);
    expect(() => resolveConsoleOptions({ authorize, redact: 'card' as never }, secret)).toThrow(
      /redact/,
    );
    expect(() => resolveConsoleOptions({ authorize, pageSize: 0 }, secret)).toThrow(/pageSize/);
  });
});
