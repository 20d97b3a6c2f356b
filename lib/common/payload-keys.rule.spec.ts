import { decodePayload } from '../consumer/input/payload.decoder';
import { UnserializablePayloadError } from '../events/errors/unserializable-payload.error';
import { validateOutboxEvent } from '../events/event.validator';
import { FORBIDDEN_PAYLOAD_KEYS, toNullPrototypeTree } from './payload-keys.rule';

const limits = { maxPayloadBytes: 900_000, allowBigInt: false };
const emit = (payload: Record<string, unknown>) =>
  validateOutboxEvent(
    { eventType: 'NoteTaken', aggregateType: 'Note', aggregateId: 'n-1', payload },
    limits,
  );

describe('the payload rule shared by the emitting side and consumers', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses only "__proto__"', () => {
    expect([...FORBIDDEN_PAYLOAD_KEYS]).toEqual(['__proto__']);
  });

  it('rebuilds a JSON tree with null prototypes, keeping constructor and prototype as data', () => {
    const result = toNullPrototypeTree(
      JSON.parse('{"constructor":"x","nested":{"prototype":1},"list":[{"a":1},2]}'),
    );
    expect(result.ok).toBe(true);
    const tree = (result as { value: Record<string, any> }).value;
    expect(Object.getPrototypeOf(tree)).toBeNull();
    expect(Object.getPrototypeOf(tree.nested)).toBeNull();
    expect(Object.getPrototypeOf(tree.list[0])).toBeNull();
    expect(Array.isArray(tree.list)).toBe(true);
    expect(tree.constructor).toBe('x');
    expect({ ...tree }).toEqual({
      constructor: 'x',
      nested: { prototype: 1 },
      list: [{ a: 1 }, 2],
    });
  });

  it('refuses "__proto__" at any depth, naming where', () => {
    expect(toNullPrototypeTree(JSON.parse('{"a":[{"b":{"__proto__":{"polluted":1}}}]}'))).toEqual({
      ok: false,
      path: 'a[0].b.__proto__',
      problem: 'forbidden-key',
    });
  });

  it('handles any depth without recursion', () => {
    const deep = '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000);
    expect(toNullPrototypeTree(JSON.parse(deep)).ok).toBe(true);
  });

  it('refuses values that are not a JSON tree', () => {
    expect(toNullPrototypeTree({ when: new Date(0) })).toMatchObject({
      ok: false,
      problem: 'not-json',
      path: 'when',
    });
    expect(toNullPrototypeTree({ f: () => 1 })).toMatchObject({ ok: false, problem: 'not-json' });
  });

  // The defect this rule fixes: the write side accepted what every consumer then refused.
  it.each([
    ['constructor and prototype keys', '{"constructor":"x","nested":{"prototype":1}}', true],
    ['a nested constructor.prototype', '{"constructor":{"prototype":{"polluted":true}}}', true],
    ['an own "__proto__" key', '{"n":1,"__proto__":{"polluted":true}}', false],
    ['a nested "__proto__" key', '{"a":[{"__proto__":{"polluted":true}}]}', false],
  ])('emit side and consumer agree on %s', (_what, json, accepted) => {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    let emitted: boolean;
    try {
      emit(parsed);
      emitted = true;
    } catch (error) {
      expect(error).toBeInstanceOf(UnserializablePayloadError);
      expect((error as Error).message).toMatch(/__proto__/);
      emitted = false;
    }
    expect(emitted).toBe(accepted);
    expect(decodePayload(json).ok).toBe(accepted);
    expect(decodePayload(parsed).ok).toBe(accepted);
  });

  it('the emitted copy of an own "__proto__" key is never re-prototyped (it is refused)', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(() => emit(parsed)).toThrow(/payload\.__proto__/);
  });
});
