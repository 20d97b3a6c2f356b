import { type OutboxEventInput, KAFKA_HEADERS } from '../documents/outbox-event.envelope';
import { FORBIDDEN_PAYLOAD_KEY_PROBLEM, isForbiddenPayloadKey } from '../common/payload-keys.rule';
import { InvalidOutboxEventError } from './errors/invalid-outbox-event.error';
import { PayloadTooLargeError } from './errors/payload-too-large.error';
import { UnserializablePayloadError } from './errors/unserializable-payload.error';

/**
 * `eventType` and `aggregateType`: a letter, then letters, digits, `.`, `_` or `-`; at most 128
 * characters. These are the characters of a Kafka topic name, so either can become part of one.
 */
export const EVENT_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9._-]{0,127}$/;
/** `EVENT_NAME_PATTERN` in words, for the errors. */
export const EVENT_NAME_RULE = `a string of 1 to 128 characters: a letter, then letters, digits, '.', '_' or '-'`;
/** `aggregateId` (the Kafka key): 1 to 256 printable ASCII characters, no spaces. */
export const AGGREGATE_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;
/** Header names: 1 to 128 letters, digits, `.`, `_` or `-`. */
export const HEADER_NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
/** Longest header value, in characters; values must not contain control characters. */
export const MAX_HEADER_VALUE_LENGTH = 4096;
export const MAX_HEADERS = 32;

/** Header names the relay writes itself (the envelope); an event may not set them. */
const RESERVED_HEADERS = new Set<string>(
  Object.entries(KAFKA_HEADERS)
    .filter(([key]) => key !== 'traceparent' && key !== 'tracestate')
    .map(([, name]) => name.toLowerCase()),
);

export interface EventValidationOptions {
  maxPayloadBytes: number;
  allowBigInt: boolean;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * Checks one event and returns it normalized (payload copied: `undefined` properties dropped as
 * JSON would, BigInt turned into decimal strings when allowed). Throws `InvalidOutboxEventError`
 * (or its subclasses `UnserializablePayloadError`, `PayloadTooLargeError`) naming the field.
 */
export function validateOutboxEvent(
  input: OutboxEventInput,
  options: EventValidationOptions,
): OutboxEventInput {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidOutboxEventError(
      'event',
      'must be an object { eventType, aggregateType, aggregateId, payload, headers? }',
    );
  }
  checkString('eventType', input.eventType, EVENT_NAME_PATTERN, NAME_RULE, 200);
  checkString('aggregateType', input.aggregateType, EVENT_NAME_PATTERN, NAME_RULE, 200);
  checkString('aggregateId', input.aggregateId, AGGREGATE_ID_PATTERN, AGGREGATE_ID_RULE, 300);
  if (!isPlainObject(input.payload)) {
    throw new UnserializablePayloadError(
      'payload',
      `must be a plain object ({ ... }), got ${Array.isArray(input.payload) ? 'an array' : describeKind(input.payload)}`,
    );
  }
  const payload = normalizeObject(input.payload, 'payload', new Set(), options.allowBigInt);
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > options.maxPayloadBytes) {
    throw new PayloadTooLargeError(bytes, options.maxPayloadBytes);
  }
  const headers = checkHeaders(input.headers);
  return {
    eventType: input.eventType,
    aggregateType: input.aggregateType,
    aggregateId: input.aggregateId,
    payload,
    ...(headers ? { headers } : {}),
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value;
}

const NAME_RULE = (got: string) =>
  `must be ${EVENT_NAME_RULE} (it may become part of a Kafka topic name), got ${got}`;
const AGGREGATE_ID_RULE = (got: string) =>
  'must be a string of 1 to 256 printable ASCII characters without spaces (it is the Kafka key),' +
  ` got ${got}. Convert ids with String(id) or id.toHexString()`;

/** Throws unless `value` is a string matching `pattern`; the error keeps its first `keep` characters. */
function checkString(
  field: string,
  value: unknown,
  pattern: RegExp,
  rule: (got: string) => string,
  keep: number,
): void {
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new InvalidOutboxEventError(field, rule(describe(value)), {
      value: typeof value === 'string' ? value.slice(0, keep) : describe(value),
    });
  }
}

function checkHeaders(headers: unknown): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  if (!isPlainObject(headers)) {
    throw new InvalidOutboxEventError('headers', 'must be a plain object of string values');
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) {
    throw new InvalidOutboxEventError(
      'headers',
      `has ${entries.length} entries, at most ${MAX_HEADERS} are allowed`,
    );
  }
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME_PATTERN.test(name)) {
      throw new InvalidOutboxEventError(
        `headers.${name}`,
        "name must be 1 to 128 letters, digits, '.', '_' or '-'",
      );
    }
    if (RESERVED_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith('ce_')) {
      throw new InvalidOutboxEventError(
        `headers.${name}`,
        'is reserved: the relay writes the CloudEvents envelope headers (ce_*, content-type) itself',
      );
    }
    if (
      typeof value !== 'string' ||
      value.length > MAX_HEADER_VALUE_LENGTH ||
      CONTROL_CHARS.test(value)
    ) {
      throw new InvalidOutboxEventError(
        `headers.${name}`,
        `value must be a string of at most ${MAX_HEADER_VALUE_LENGTH} characters without control characters, got ${describe(value)}`,
      );
    }
    out[name] = value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') {
    const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)
      ?.constructor;
    return `an instance of ${ctor?.name || 'an unknown class'}`;
  }
  return typeof value;
}

function normalizeObject(
  obj: Record<string, unknown>,
  path: string,
  seen: Set<object>,
  allowBigInt: boolean,
): Record<string, unknown> {
  seen.add(obj);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    const childPath = `${path}.${key}`;
    if (isForbiddenPayloadKey(key)) {
      throw new UnserializablePayloadError(childPath, FORBIDDEN_PAYLOAD_KEY_PROBLEM);
    }
    if (key.startsWith('$') || key.includes('\u0000')) {
      throw new UnserializablePayloadError(
        childPath,
        "is not a storable field name: MongoDB field names must not start with '$' or contain NUL",
      );
    }
    const value = obj[key];
    if (value === undefined) continue; // dropped, as JSON.stringify does
    out[key] = normalizeValue(value, childPath, seen, allowBigInt);
  }
  seen.delete(obj);
  return out;
}

function normalizeValue(
  value: unknown,
  path: string,
  seen: Set<object>,
  allowBigInt: boolean,
): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new UnserializablePayloadError(
          path,
          `is ${value}; JSON has no NaN or Infinity, use null or a string`,
        );
      }
      return value;
    case 'bigint':
      if (!allowBigInt) {
        throw new UnserializablePayloadError(
          path,
          'is a BigInt, which JSON cannot carry. Convert it (value.toString()) or set the OutboxModule option "allowBigInt: true" to send BigInts as decimal strings',
        );
      }
      return value.toString(10);
    case 'undefined':
      throw new UnserializablePayloadError(
        path,
        'is undefined inside an array; JSON would turn it into null, use null',
      );
    case 'function':
    case 'symbol':
      throw new UnserializablePayloadError(path, `is a ${typeof value}, which JSON cannot carry`);
  }
  if (value === null) return null;
  const obj = value as object;
  if (seen.has(obj)) {
    throw new UnserializablePayloadError(path, 'is a circular reference');
  }
  if (obj instanceof Date) {
    if (Number.isNaN(obj.getTime())) {
      throw new UnserializablePayloadError(path, 'is an invalid Date');
    }
    return new Date(obj.getTime());
  }
  if (Array.isArray(obj)) {
    seen.add(obj);
    const out = obj.map((item, i) => normalizeValue(item, `${path}[${i}]`, seen, allowBigInt));
    seen.delete(obj);
    return out;
  }
  if (isPlainObject(obj)) {
    return normalizeObject(obj, path, seen, allowBigInt);
  }
  throw new UnserializablePayloadError(
    path,
    `is ${describeKind(obj)}; only plain objects, arrays, strings, finite numbers, booleans, null and Dates are allowed. Convert it first (e.g. ObjectId: id.toHexString(), Decimal: value.toString(), Map: Object.fromEntries(map))`,
  );
}
