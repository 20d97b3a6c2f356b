import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { OutboxError } from '../common/errors/outbox.error';
import { InvalidOutboxEventError } from './errors/invalid-outbox-event.error';
import { PayloadTooLargeError } from './errors/payload-too-large.error';
import { UnserializablePayloadError } from './errors/unserializable-payload.error';
import { validateOutboxEvent } from './event.validator';

const limits = { maxPayloadBytes: 900_000, allowBigInt: false };
const good: OutboxEventInput = {
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: '65f1c0ffee',
  payload: { total: 10 },
};

function errorOf(input: unknown, options = limits): InvalidOutboxEventError {
  try {
    validateOutboxEvent(input as OutboxEventInput, options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOutboxEventError);
    expect(error).toBeInstanceOf(OutboxError);
    return error as InvalidOutboxEventError;
  }
  throw new Error('expected a validation error');
}

describe('event validation', () => {
  it('accepts a good event and copies it', () => {
    const valid = validateOutboxEvent(
      {
        ...good,
        payload: { a: [1, 'x', null, true, { b: new Date(0) }] },
        headers: { traceparent: 't' },
      },
      limits,
    );
    expect(valid.payload).toEqual({ a: [1, 'x', null, true, { b: new Date(0) }] });
    expect(valid.headers).toEqual({ traceparent: 't' });
  });

  it('accepts payloads with a null prototype and names up to the limits', () => {
    const payload = Object.assign(Object.create(null) as object, { a: 1 });
    expect(() =>
      validateOutboxEvent(
        {
          ...good,
          payload,
          eventType: 'A'.repeat(128),
          aggregateId: '!'.repeat(256),
        } as OutboxEventInput,
        limits,
      ),
    ).not.toThrow();
  });

  it.each([
    ['empty', ''],
    ['a space', 'Order Created'],
    ['a leading digit', '1Order'],
    ['a slash', 'orders/created'],
    ['too long', 'A'.repeat(129)],
    ['not a string', 42],
  ])('rejects an eventType with %s', (_what, eventType) => {
    const error = errorOf({ ...good, eventType });
    expect(error.field).toBe('eventType');
    expect(error.code).toBe('OUTBOX_INVALID_EVENT');
    expect(error.message).toMatch(/letter, then letters, digits/);
  });

  it.each([
    ['empty', ''],
    ['a colon', 'Order:v1'],
    ['undefined', undefined],
  ])('rejects an aggregateType with %s', (_what, aggregateType) => {
    expect(errorOf({ ...good, aggregateType }).field).toBe('aggregateType');
  });

  it.each([
    ['empty', ''],
    ['a space', 'order 1'],
    ['a non-ASCII character', 'ordér'],
    ['a newline', 'o\n1'],
    ['too long', 'x'.repeat(257)],
    ['a number', 12],
    ['an object', { toString: () => 'x' }],
  ])('rejects an aggregateId with %s', (_what, aggregateId) => {
    const error = errorOf({ ...good, aggregateId });
    expect(error.field).toBe('aggregateId');
    expect(error.message).toMatch(/printable ASCII/);
  });

  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', 'x'],
    ['a class instance', new Map()],
    ['undefined', undefined],
  ])('rejects a payload that is %s', (_what, payload) => {
    const error = errorOf({ ...good, payload });
    expect(error).toBeInstanceOf(UnserializablePayloadError);
    expect(error.message).toMatch(/plain object/);
  });

  class Money {
    constructor(readonly cents: number) {}
  }
  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;

  it.each([
    ['a function', { f: () => 1 }, 'payload.f', /function/],
    ['a symbol', { s: Symbol('x') }, 'payload.s', /symbol/],
    ['a BigInt', { n: 10n }, 'payload.n', /allowBigInt/],
    ['NaN', { n: NaN }, 'payload.n', /NaN/],
    ['Infinity', { n: [Infinity] }, 'payload.n[0]', /Infinity/],
    ['undefined in an array', { a: [1, undefined] }, 'payload.a[1]', /undefined/],
    ['a circular reference', { c: circular }, 'payload.c.self', /circular/],
    ['a class instance', { m: new Money(5) }, 'payload.m', /Money/],
    ['a Buffer', { b: Buffer.from('x') }, 'payload.b', /Buffer/],
    ['an invalid Date', { d: new Date('nope') }, 'payload.d', /invalid Date/],
    ['a $-prefixed key', { $set: 1 }, 'payload.$set', /'\$'/],
    ['a NUL in a key', { 'a\u0000b': 1 }, 'payload.a\u0000b', /NUL/],
  ])('rejects a payload holding %s, naming its path', (_what, payload, path, message) => {
    const error = errorOf({ ...good, payload });
    expect(error).toBeInstanceOf(UnserializablePayloadError);
    expect(error.code).toBe('OUTBOX_UNSERIALIZABLE_PAYLOAD');
    expect((error as UnserializablePayloadError).path).toBe(path);
    expect(error.message).toMatch(message);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(
      validateOutboxEvent({ ...good, payload: { a: shared, b: [shared, shared] } }, limits).payload,
    ).toEqual({
      a: { x: 1 },
      b: [{ x: 1 }, { x: 1 }],
    });
  });

  it('drops undefined properties, as JSON does', () => {
    expect(
      validateOutboxEvent({ ...good, payload: { a: 1, b: undefined } }, limits).payload,
    ).toEqual({ a: 1 });
  });

  it('turns BigInt into decimal strings when allowBigInt is on', () => {
    const valid = validateOutboxEvent(
      { ...good, payload: { n: 12345678901234567890n, list: [1n] } },
      { ...limits, allowBigInt: true },
    );
    expect(valid.payload).toEqual({ n: '12345678901234567890', list: ['1'] });
  });

  it('rejects a payload whose JSON is larger than maxPayloadBytes, counting UTF-8 bytes', () => {
    const error = errorOf(
      { ...good, payload: { s: 'é'.repeat(60) } },
      { ...limits, maxPayloadBytes: 100 },
    );
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.code).toBe('OUTBOX_PAYLOAD_TOO_LARGE');
    expect((error as PayloadTooLargeError).bytes).toBe(128); // {"s":"..."} = 8 + 120
    expect(error.message).toMatch(/maxPayloadBytes \(100\)/);
    expect(() =>
      validateOutboxEvent(
        { ...good, payload: { s: 'x'.repeat(92) } },
        { ...limits, maxPayloadBytes: 100 },
      ),
    ).not.toThrow();
  });

  it.each([
    ['not an object', 'x', 'headers', /plain object/],
    ['a bad name', { 'a b': 'x' }, 'headers.a b', /name must be/],
    ['a reserved CloudEvents name', { ce_id: 'x' }, 'headers.ce_id', /reserved/],
    ['content-type', { 'Content-Type': 'x' }, 'headers.Content-Type', /reserved/],
    ['a non-string value', { a: 1 }, 'headers.a', /value must be a string/],
    ['a control character', { a: 'x\ny' }, 'headers.a', /control characters/],
    ['a too long value', { a: 'x'.repeat(4097) }, 'headers.a', /at most 4096/],
    [
      'too many entries',
      Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, 'v'])),
      'headers',
      /at most 32/,
    ],
  ])('rejects headers with %s', (_what, headers, field, message) => {
    const error = errorOf({ ...good, headers });
    expect(error.field).toBe(field);
    expect(error.message).toMatch(message);
  });

  it('rejects an event that is not an object', () => {
    expect(errorOf(null).field).toBe('event');
    expect(errorOf([good]).field).toBe('event');
  });
});
