import { REDACTED, redactPayload, redactValueText, safeError } from './redact';

describe('redaction', () => {
  it('hides names at every depth and dot paths at theirs', () => {
    const payload = {
      card: '4111',
      customer: { email: 'a@b', card: '5500', name: 'Ann' },
      items: [{ card: 'x' }],
    };
    expect(redactPayload(payload, ['card', 'customer.email'])).toEqual({
      card: REDACTED,
      customer: { email: REDACTED, card: REDACTED, name: 'Ann' },
      items: [{ card: REDACTED }],
    });
    expect(redactPayload(payload, () => 'hidden')).toBe('hidden');
    expect(redactPayload(payload, undefined)).toBe(payload);
  });

  it('hides a non-JSON message value whole when redaction is on', () => {
    expect(redactValueText('{"card":"1"}', ['card'])).toEqual({ card: REDACTED });
    expect(redactValueText('not json', ['card'])).toBe(REDACTED);
    expect(redactValueText('not json', undefined)).toBe('not json');
  });

  it('removes credentials from connection strings in errors', () => {
    // Built from parts: no credentialed address stands in the source.
    const address = ['mongodb://user', 'pw@host:27017/db'].join(':');
    expect(safeError(`connect ${address} failed`)).toBe(
      'connect mongodb://***@host:27017/db failed',
    );
  });
});
