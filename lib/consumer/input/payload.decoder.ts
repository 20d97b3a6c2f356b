import { toNullPrototypeTree } from '../../common/payload-keys.rule';

/**
 * Safe decoding of a message value into the payload handed to an `@IdempotentHandler` method,
 * under the rule the emitting side applies too (`lib/common/payload-keys.rule.ts`): the value
 * must be a JSON object; `__proto__` keys are refused at any depth (the message is dead-lettered,
 * never "cleaned" and applied); every object of the result has a null prototype, so keys such as
 * `constructor` or `prototype` are plain data.
 */
import type { BadPayloadReason } from '../../documents/consumer-dead-letter.document';
import { refuse, type InputRefusal } from './input.refusal';

export type DecodeResult =
  { ok: true; payload: Record<string, unknown> } | InputRefusal<BadPayloadReason>;

/**
 * The payload of a message value: a Buffer (the bytes received) or a string is parsed here; an
 * object Nest's Kafka parser already built with `JSON.parse` is rebuilt; no value at all (a
 * tombstone) is `empty-value`.
 */
export function decodePayload(value: unknown): DecodeResult {
  if (value == null) return refuse('empty-value', 'message has no value');
  let tree: unknown = value;
  if (Buffer.isBuffer(value) || typeof value === 'string') {
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    try {
      tree = JSON.parse(text);
    } catch (error) {
      return refuse('invalid-json', `value is not valid JSON (${(error as Error).message})`);
    }
  } else if (typeof value !== 'object') {
    return refuse('invalid-json', `value of type ${typeof value} is not JSON`);
  }
  if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) {
    return refuse(
      'invalid-payload',
      `payload must be a JSON object, got ${Array.isArray(tree) ? 'an array' : tree === null ? 'null' : `a ${typeof tree}`}`,
    );
  }
  const rebuilt = toNullPrototypeTree(tree);
  if (!rebuilt.ok) {
    return rebuilt.problem === 'forbidden-key'
      ? refuse('forbidden-key', `payload has a "__proto__" key at ${rebuilt.path}`)
      : refuse('invalid-json', `value is not a plain JSON tree at ${rebuilt.path || '(root)'}`);
  }
  return { ok: true, payload: rebuilt.value as Record<string, unknown> };
}
