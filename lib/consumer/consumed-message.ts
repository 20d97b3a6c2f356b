/**
 * One Kafka message as `@IdempotentHandler` sees it, read from Nest's `KafkaContext`.
 * Nest's Kafka parser has already decoded it: header values are strings (a value starting with a
 * zero byte stays a Buffer), and `value` is a parsed object/array when the text started with
 * `{`/`[` and parsed, else the text, a Buffer (zero-byte prefix or `parser.keepBinary`), or null.
 */
export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  timestamp?: string;
  headers: Record<string, string>;
  /** The value as Nest's parser left it. `@IdempotentHandler` never trusts it: see `decodePayload`. */
  value: unknown;
}

/** What a `KafkaContext` offers that we use (duck-typed, so two copies of the package still work). */
export interface KafkaContextLike {
  getMessage(): unknown;
  getTopic(): string;
  getPartition(): number;
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
  const raw = (ctx.getMessage() ?? {}) as Record<string, unknown>;
  return {
    topic: ctx.getTopic(),
    partition: ctx.getPartition(),
    offset: String(raw.offset ?? ''),
    key: raw.key == null ? null : headerText(raw.key),
    timestamp: raw.timestamp == null ? undefined : String(raw.timestamp),
    headers: normalizeHeaders(raw.headers),
    value: raw.value,
  };
}

/** Header values as text (Buffer → UTF-8, repeated header → its first value). */
export function normalizeHeaders(headers: unknown): Record<string, string> {
  const result: Record<string, string> = Object.create(null);
  if (typeof headers !== 'object' || headers === null) return result;
  for (const name of Object.keys(headers)) {
    const text = headerValue((headers as Record<string, unknown>)[name]);
    if (text !== undefined) result[name] = text;
  }
  return result;
}

function headerValue(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? headerValue(value[0]) : undefined;
  if (value == null) return undefined;
  return headerText(value);
}

function headerText(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return typeof value === 'string' ? value : String(value);
}

/**
 * The message value as text, for the dead-letter record and topic: a Buffer as UTF-8, a value
 * Nest already parsed as its JSON again (own `__proto__` keys included), null when there is none.
 */
export function rawValueText(value: unknown): string | null {
  if (value == null) return null;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
