import type { ConsumedMessage } from './consumed-message';
import { refuse, type InputRefusal } from './input.refusal';

/** Computes an event id when the message has no id header (e.g. from another producer's field). */
export type EventIdFallback = (message: ConsumedMessage, payload: unknown) => string | undefined;

export const MAX_EVENT_ID_LENGTH = 256;

export type EventIdResult =
  | { ok: true; eventId: string; source: 'header' | 'fallback' }
  | InputRefusal<'missing-event-id' | 'invalid-event-id'>;

/**
 * The event id of a message: the `header` (the relay writes `ce_id`), else `fallback`
 * (called with the decoded payload, or `undefined` when the value did not decode).
 * An id must be a non-empty string of at most 256 characters without control characters.
 * The header is read as the text that was sent: when Nest's parser JSON-decoded it (plain
 * `Transport.KAFKA`, a value starting with `{` or `[`), the id is refused rather than guessed,
 * since every such message would otherwise share one id and all but the first be skipped.
 */
export function extractEventId(
  message: ConsumedMessage,
  header: string,
  fallback: EventIdFallback | undefined,
  payload: unknown,
): EventIdResult {
  if (message.decodedHeaders.includes(header)) {
    return refuse(
      'invalid-event-id',
      `header "${header}" starts with "{" or "[", and Nest's Kafka parser replaced its text by ` +
        'parsed JSON, so the id that was sent is unknown. Consume with OutboxKafkaServer (it ' +
        'keeps the bytes received), or send ids that do not start with "{" or "["',
    );
  }
  const fromHeader = message.headers[header];
  if (fromHeader !== undefined) return checkEventId(fromHeader, 'header', `header "${header}"`);
  if (!fallback) {
    return refuse(
      'missing-event-id',
      `message has no "${header}" header and no eventId fallback is configured`,
    );
  }
  let computed: unknown;
  try {
    computed = fallback(message, payload);
  } catch (error) {
    return refuse(
      'missing-event-id',
      `no "${header}" header, and the eventId fallback threw: ${(error as Error)?.message ?? String(error)}`,
    );
  }
  if (computed === undefined || computed === null) {
    return refuse(
      'missing-event-id',
      `message has no "${header}" header and the eventId fallback returned none`,
    );
  }
  return checkEventId(computed, 'fallback', 'eventId fallback');
}

function checkEventId(value: unknown, source: 'header' | 'fallback', where: string): EventIdResult {
  if (typeof value !== 'string') {
    return refuse('invalid-event-id', `${where} gave a ${typeof value}`);
  }
  if (value.length === 0 || value.length > MAX_EVENT_ID_LENGTH || hasControlCharacters(value)) {
    return refuse(
      'invalid-event-id',
      `${where} is not a usable event id (1-${MAX_EVENT_ID_LENGTH} printable characters)`,
    );
  }
  return { ok: true, eventId: value, source };
}

/** True when `text` has a C0 control character or DEL. */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
