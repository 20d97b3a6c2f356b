/**
 * The payload rule both sides share: the emitting side (`validateOutboxEvent`) and
 * `@IdempotentHandler` refuse exactly the same keys, so an event the write side accepts is never
 * refused by a consumer.
 *
 * Only `__proto__` is refused, at any depth. `JSON.parse` turns it into an own property; copying
 * such an object with `Object.assign`, a spread into a class instance or a deep merge then sets
 * the target's prototype (prototype pollution), and on the emitting side `out[key] = value` would
 * silently drop the field and re-prototype the stored copy. `constructor` and `prototype` are
 * ordinary data: they are harmless in the null-prototype objects consumers receive
 * (`toNullPrototypeTree`), where no inherited `constructor` exists to reach through.
 */
export const FORBIDDEN_PAYLOAD_KEYS: ReadonlySet<string> = new Set(['__proto__']);

export function isForbiddenPayloadKey(key: string): boolean {
  return FORBIDDEN_PAYLOAD_KEYS.has(key);
}

/** The explanation used by both sides' errors. */
export const FORBIDDEN_PAYLOAD_KEY_PROBLEM =
  'is a "__proto__" key, which would change the prototype of the object that receives it ' +
  '(prototype pollution); rename the field';

export type TreeResult =
  { ok: true; value: unknown } | { ok: false; path: string; problem: 'forbidden-key' | 'not-json' };

const NOT_JSON_TYPES = new Set(['function', 'symbol', 'bigint']);

/**
 * Rebuilds a JSON tree (what `JSON.parse` returns: plain objects, arrays, strings, numbers,
 * booleans, null) with every object created by `Object.create(null)`, refusing `__proto__` at any
 * depth. Iterative, so any nesting depth is fine. A value that is not such a tree (a class
 * instance, a function) is `not-json`.
 */
export function toNullPrototypeTree(root: unknown): TreeResult {
  const top: Record<string, unknown> = {};
  // Still to copy: [source value, the copy to put it in, under which key, its path].
  const stack: Array<[unknown, Record<string, unknown>, string, string]> = [
    [root, top, 'value', ''],
  ];
  while (stack.length > 0) {
    const [source, target, key, path] = stack.pop()!;
    if (source === null || typeof source !== 'object') {
      if (NOT_JSON_TYPES.has(typeof source)) return { ok: false, path, problem: 'not-json' };
      target[key] = source;
    } else if (Array.isArray(source)) {
      const copy = new Array(source.length) as unknown as Record<string, unknown>;
      target[key] = copy;
      for (let i = 0; i < source.length; i++) {
        stack.push([source[i], copy, String(i), `${path}[${i}]`]);
      }
    } else {
      const proto = Object.getPrototypeOf(source) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        return { ok: false, path, problem: 'not-json' };
      }
      const copy = Object.create(null) as Record<string, unknown>;
      target[key] = copy;
      for (const name of Object.keys(source)) {
        const childPath = path ? `${path}.${name}` : name;
        if (isForbiddenPayloadKey(name)) {
          return { ok: false, path: childPath, problem: 'forbidden-key' };
        }
        stack.push([(source as Record<string, unknown>)[name], copy, name, childPath]);
      }
    }
  }
  return { ok: true, value: top.value };
}
