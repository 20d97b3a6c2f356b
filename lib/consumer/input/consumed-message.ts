import { rawMessageOf } from './raw-kafka-message';

/**
 * One Kafka message as `@IdempotentHandler` sees it, read from Nest's `KafkaContext`.
 *
 * Under `OutboxKafkaServer` it is built from the bytes kafkajs received (the server keeps them):
 * header values are their exact UTF-8 text and `value` is the received Buffer. Under Nest's own
 * `Transport.KAFKA` only Nest's decoded copy exists: a header value or a value whose text starts
 * with `{` or `[` was JSON-parsed, and its original text is lost; such headers are listed in
 * `decodedHeaders` (their text is not guessed back) and `value` is what Nest made of it.
 */
export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  timestamp?: string;
  /** Header values as text (a repeated header: its first value). A null-prototype object. */
  headers: Record<string, string>;
  /** Headers whose text Nest's parser replaced by parsed JSON (plain `Transport.KAFKA`). */
  decodedHeaders: readonly string[];
  /** The bytes received (`rawValue: true`), or Nest's decoded value. `@IdempotentHandler` never trusts it: see `decodePayload`. */
  value: unknown;
  /** True when `value` is exactly the bytes received (a Buffer). */
  rawValue: boolean;
}

/** What a `KafkaContext` offers that we use (duck-typed, so two copies of the package still work). */
export interface KafkaContextLike {
  getMessage(): unknown;
  getTopic(): string;
  getPartition(): number;
  getConsumer?(): unknown;
  getHeartbeat?(): unknown;
  getProducer?(): unknown;
}

export function isKafkaContextLike(value: unknown): value is KafkaContextLike {
  if (typeof value !== 'object' || value === null) return false;
  const ctx = value as Record<string, unknown>;
  return (
    typeof ctx.getMessage === 'function' &&
    typeof ctx.getTopic === 'function' &&
    typeof ctx.getPartition === 'function'
  );
}

/** The `KafkaContext` among a handler's arguments (Nest passes `(data, context)` by default). */
export function findKafkaContext(args: readonly unknown[]): KafkaContextLike | undefined {
  for (let i = args.length - 1; i >= 0; i--) {
    if (isKafkaContextLike(args[i])) return args[i] as KafkaContextLike;
  }
  return undefined;
}

export function toConsumedMessage(ctx: KafkaContextLike): ConsumedMessage {
  const parsed = (ctx.getMessage() ?? {}) as Record<string, unknown>;
  const raw = rawMessageOf(parsed);
  const headers: Record<string, string> = Object.create(null);
  const decodedHeaders: string[] = [];
  const source = (raw ? raw.headers : parsed.headers) as Record<string, unknown> | undefined;
  if (typeof source === 'object' && source !== null) {
    for (const name of Object.keys(source)) {
      const text = raw ? rawHeaderText(source[name]) : parsedHeaderText(source[name]);
      if (text === undefined) continue;
      if (text === DECODED) decodedHeaders.push(name);
      else headers[name] = text;
    }
  }
  const key = raw ? raw.key : parsed.key;
  const received = raw ? raw.value : parsed.value;
  const value = typeof received === 'string' && raw ? Buffer.from(received, 'utf8') : received;
  return {
    topic: ctx.getTopic(),
    partition: ctx.getPartition(),
    offset: String(parsed.offset ?? ''),
    key: key == null ? null : Buffer.isBuffer(key) ? key.toString('utf8') : String(key),
    timestamp: parsed.timestamp == null ? undefined : String(parsed.timestamp),
    headers,
    decodedHeaders,
    value,
    rawValue: Buffer.isBuffer(value),
  };
}

const DECODED = Symbol('decoded');

/** A header value as kafkajs received it (a repeated header is an array: its first value). */
function rawHeaderText(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? rawHeaderText(value[0]) : undefined;
  if (value == null) return undefined;
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

/**
 * A header value as Nest's parser left it: text, a Buffer (a zero-byte prefix), or anything else
 * when it parsed the text as JSON (`DECODED`: an object, an array, never guessed back).
 */
function parsedHeaderText(value: unknown): string | typeof DECODED | undefined {
  if (value == null) return undefined;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  return DECODED;
}

/**
 * The value as bytes, for the dead-letter copy and its hash. `exact` is false when only Nest's
 * decoded value exists (plain `Transport.KAFKA`): a parsed object is serialized again, which gives
 * the same bytes for the usual compact JSON, not for every possible text.
 */
export function valueBytes(message: ConsumedMessage): { bytes: Buffer | null; exact: boolean } {
  const { value } = message;
  if (value == null) return { bytes: null, exact: true };
  if (Buffer.isBuffer(value)) return { bytes: value, exact: true };
  if (typeof value === 'string') return { bytes: Buffer.from(value, 'utf8'), exact: true };
  try {
    return { bytes: Buffer.from(JSON.stringify(value) ?? String(value), 'utf8'), exact: false };
  } catch {
    return { bytes: Buffer.from(String(value), 'utf8'), exact: false };
  }
}
