import { decodePayload } from './payload.decoder';

describe('payload decoding', () => {
  afterEach(() => {
    // Nothing in here may ever reach Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('parses a JSON object from text, a Buffer, or an object Nest already parsed', () => {
    for (const value of [
      '{"orderId":"o1","lines":[{"sku":"a"}]}',
      Buffer.from('{"orderId":"o1","lines":[{"sku":"a"}]}'),
      { orderId: 'o1', lines: [{ sku: 'a' }] },
    ]) {
      const result = decodePayload(value);
      expect(result.ok).toBe(true);
      expect({ ...(result as { payload: object }).payload }).toEqual({
        orderId: 'o1',
        lines: [{ sku: 'a' }],
      });
    }
  });

  it('returns null-prototype objects, so constructor and prototype keys are data', () => {
    const result = decodePayload('{"constructor":"x","nested":{"prototype":1}}');
    const payload = (result as { payload: Record<string, any> }).payload;
    expect(Object.getPrototypeOf(payload)).toBeNull();
    expect(payload.constructor).toBe('x');
    expect(payload.nested.prototype).toBe(1);
  });

  // Defect 7: '42' used to decode to 42 and reach the handler.
  it.each([
    ['42', 'a number'],
    ['"hi"', 'a string'],
    ['true', 'a boolean'],
    ['null', 'null'],
    ['[1,2]', 'an array'],
  ])('refuses a payload that is not a JSON object: %s', (text, what) => {
    expect(decodePayload(text)).toEqual({
      ok: false,
      reason: 'invalid-payload',
      detail: `payload must be a JSON object, got ${what}`,
    });
  });

  it('refuses a value that is not JSON', () => {
    expect(decodePayload('{oops')).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(decodePayload('plain text')).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(decodePayload(Buffer.from([0, 1, 2]))).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
    expect(decodePayload(7)).toMatchObject({ ok: false, reason: 'invalid-json' });
  });

  it('refuses a missing value (tombstone)', () => {
    expect(decodePayload(null)).toMatchObject({ ok: false, reason: 'empty-value' });
    expect(decodePayload(undefined)).toMatchObject({ ok: false, reason: 'empty-value' });
  });

  it('refuses "__proto__" at any depth, from text or from a tree Nest parsed', () => {
    const text = '{"a":{"b":[{"__proto__":{"polluted":true}}]}}';
    expect(decodePayload(text)).toEqual({
      ok: false,
      reason: 'forbidden-key',
      detail: 'payload has a "__proto__" key at a.b[0].__proto__',
    });
    expect(decodePayload(JSON.parse(text))).toMatchObject({ ok: false, reason: 'forbidden-key' });
  });
});
