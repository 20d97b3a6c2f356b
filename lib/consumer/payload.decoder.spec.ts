import { checkParsedTree, decodePayload, parseJsonSafely } from './payload.decoder';

describe('payload decoding', () => {
  afterEach(() => {
    // Nothing in here may ever reach Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('parses a JSON object from text, a Buffer, or an object Nest already parsed', () => {
    expect(decodePayload('{"orderId":"o1","lines":[{"sku":"a"}]}')).toEqual({
      ok: true,
      payload: { orderId: 'o1', lines: [{ sku: 'a' }] },
    });
    expect(decodePayload(Buffer.from('{"a":1}'))).toEqual({ ok: true, payload: { a: 1 } });
    expect(decodePayload({ a: [1, { b: null }] })).toEqual({
      ok: true,
      payload: { a: [1, { b: null }] },
    });
  });

  it('accepts JSON scalars that Nest left as text', () => {
    expect(decodePayload('42')).toEqual({ ok: true, payload: 42 });
    expect(decodePayload('"hi"')).toEqual({ ok: true, payload: 'hi' });
  });

  it('rejects a value that is not JSON', () => {
    const result = decodePayload('{oops');
    expect(result).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(decodePayload('plain text')).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(decodePayload(Buffer.from([0, 1, 2]))).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
  });

  it('rejects a missing value (tombstone)', () => {
    expect(decodePayload(null)).toMatchObject({ ok: false, reason: 'empty-value' });
    expect(decodePayload(undefined)).toMatchObject({ ok: false, reason: 'empty-value' });
  });

  it.each([
    ['top-level __proto__', '{"__proto__":{"polluted":true}}', '__proto__'],
    ['nested __proto__', '{"a":{"b":[{"__proto__":{"polluted":true}}]}}', '__proto__'],
    ['constructor.prototype', '{"constructor":{"prototype":{"polluted":true}}}', 'prototype'],
    ['constructor', '{"x":1,"constructor":{"polluted":true}}', 'constructor'],
    ['prototype', '{"prototype":{"polluted":true}}', 'prototype'],
  ])('refuses %s in text, and never pollutes Object.prototype', (_name, text, key) => {
    const result = parseJsonSafely(text);
    expect(result).toEqual({
      ok: false,
      reason: 'forbidden-key',
      detail: `payload has a "${key}" key`,
    });
  });

  it('refuses forbidden keys in a tree Nest parsed with plain JSON.parse', () => {
    // What Nest's KafkaParser hands over for such a message: an own "__proto__" property.
    const parsed = JSON.parse('{"a":[{"__proto__":{"polluted":true}}]}') as unknown;
    expect(checkParsedTree(parsed)).toMatchObject({ ok: false, reason: 'forbidden-key' });
    expect(decodePayload(JSON.parse('{"constructor":{"prototype":{}}}'))).toMatchObject({
      ok: false,
      reason: 'forbidden-key',
    });
  });

  it('refuses objects that are not plain JSON (class instances)', () => {
    expect(checkParsedTree({ when: new Date() })).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
  });

  it('accepts forbidden words as values and array elements', () => {
    expect(decodePayload('{"name":"__proto__","list":["constructor"]}')).toEqual({
      ok: true,
      payload: { name: '__proto__', list: ['constructor'] },
    });
  });

  it('checks very deep trees without overflowing the stack', () => {
    let tree: unknown = { leaf: true };
    for (let i = 0; i < 100_000; i++) tree = { child: tree };
    expect(checkParsedTree(tree).ok).toBe(true);
  });
});
