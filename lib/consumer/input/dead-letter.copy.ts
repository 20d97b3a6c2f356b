import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { DeadLetterCopy } from '../../documents/consumer-dead-letter.document';
import { valueBytes, type ConsumedMessage } from './consumed-message';

/** Most headers a dead letter keeps, and the longest header name and value kept (characters). */
export const DEAD_LETTER_HEADER_LIMITS = { count: 64, name: 256, value: 4096 } as const;

/** The bounded copy of `message` kept by a dead letter (and sent to the dead-letter topic). */
export function deadLetterCopy(message: ConsumedMessage, maxValueBytes: number): DeadLetterCopy {
  const { bytes, exact } = valueBytes(message);
  const headers = Object.keys(message.headers)
    .slice(0, DEAD_LETTER_HEADER_LIMITS.count)
    .map((key) => ({
      key: key.slice(0, DEAD_LETTER_HEADER_LIMITS.name),
      value: message.headers[key].slice(0, DEAD_LETTER_HEADER_LIMITS.value),
    }));
  const key = message.key === null ? null : message.key.slice(0, DEAD_LETTER_HEADER_LIMITS.value);
  if (bytes === null) {
    return {
      key,
      headers,
      value: null,
      valueEncoding: 'utf8',
      valueBytes: 0,
      valueSha256: null,
      valueTruncated: false,
      valueExact: exact,
    };
  }
  const truncated = bytes.length > maxValueBytes;
  const kept = truncated ? bytes.subarray(0, utf8Boundary(bytes, maxValueBytes)) : bytes;
  const text = isUtf8(kept);
  return {
    key,
    headers,
    value: kept.toString(text ? 'utf8' : 'base64'),
    valueEncoding: text ? 'utf8' : 'base64',
    valueBytes: bytes.length,
    valueSha256: createHash('sha256').update(bytes).digest('hex'),
    valueTruncated: truncated,
    valueExact: exact,
  };
}

/** The largest length <= `max` that does not cut a UTF-8 sequence in two. */
function utf8Boundary(bytes: Buffer, max: number): number {
  let end = max;
  // Back up over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && end > max - 4 && (bytes[end] & 0xc0) === 0x80) end--;
  return end;
}
