/**
 * Safe decoding of a message value into the payload handed to an `@IdempotentHandler` method.
 *
 * Keys that could reach `Object.prototype` when user code later merges the payload
 * (`__proto__`, `constructor`, `prototype`) are refused at any depth: the message is dead-lettered,
 * never "cleaned" and applied, since a sender that puts them there is broken or hostile.
 */
export const FORBIDDEN_PAYLOAD_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

export type BadPayloadReason = 'empty-value' | 'invalid-json' | 'forbidden-key';

export type DecodeResult =
  { ok: true; payload: unknown } | { ok: false; reason: BadPayloadReason; detail: string };

class ForbiddenKeyFound extends Error {
  constructor(readonly key: string) {
    super(key);
  }
}

/**
 * `JSON.parse` with a reviver that stops at the first forbidden key. (`JSON.parse` itself makes
 * `__proto__` an own property, which is harmless until someone copies it with `Object.assign`
 * or a deep merge; refusing it here keeps the hazard out of the application entirely.)
 */
export function parseJsonSafely(text: string): DecodeResult {
  try {
    const payload: unknown = JSON.parse(text, (key, value: unknown) => {
      if (FORBIDDEN_PAYLOAD_KEYS.has(key)) throw new ForbiddenKeyFound(key);
      return value;
    });
    return { ok: true, payload };
  } catch (error) {
    if (error instanceof ForbiddenKeyFound) {
      return { ok: false, reason: 'forbidden-key', detail: `payload has a "${error.key}" key` };
    }
    return {
      ok: false,
      reason: 'invalid-json',
      detail: `value is not valid JSON (${(error as Error).message})`,
    };
  }
}

/**
 * Checks a tree Nest's Kafka parser already built with plain `JSON.parse`: only plain objects,
 * arrays and primitives, and no forbidden key at any depth. Iterative, so any depth is fine.
 */
export function checkParsedTree(root: unknown): DecodeResult {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const proto = Object.getPrototypeOf(node) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      return { ok: false, reason: 'invalid-json', detail: 'value is not a plain JSON tree' };
    }
    for (const key of Object.keys(node)) {
      if (FORBIDDEN_PAYLOAD_KEYS.has(key)) {
        return { ok: false, reason: 'forbidden-key', detail: `payload has a "${key}" key` };
      }
      stack.push((node as Record<string, unknown>)[key]);
    }
  }
  return { ok: true, payload: root };
}

/**
 * The payload of a message value as Nest's Kafka parser left it: a Buffer (`keepBinary`, or a
 * zero-byte prefix) or a string is parsed here with `parseJsonSafely` (so a value Nest could not
 * parse, e.g. `{oops`, is `invalid-json`); an object Nest already parsed is checked with
 * `checkParsedTree`; no value at all (a tombstone) is `empty-value`.
 */
export function decodePayload(value: unknown): DecodeResult {
  if (value == null) return { ok: false, reason: 'empty-value', detail: 'message has no value' };
  if (Buffer.isBuffer(value)) return parseJsonSafely(value.toString('utf8'));
  if (typeof value === 'string') return parseJsonSafely(value);
  if (typeof value === 'object') return checkParsedTree(value);
  return {
    ok: false,
    reason: 'invalid-json',
    detail: `value of type ${typeof value} is not JSON text`,
  };
}
