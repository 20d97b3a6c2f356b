/**
 * The bytes of a Kafka message as kafkajs received them, before Nest's `KafkaParser` decoded
 * them (it turns header and value text that starts with `{` or `[` into parsed JSON, so the
 * original text is lost). `OutboxKafkaServer` keeps them on the parsed message, under a
 * registry-wide symbol (so two copies of this package agree), non-enumerable (so nothing that
 * copies or logs the message sees them).
 */
export interface RawKafkaMessage {
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers: Record<string, unknown>;
}

const RAW_MESSAGE = Symbol.for('nestjs-outbox:raw-kafka-message');

/** Attaches `raw` to `parsed` (the message a `KafkaContext` will return). */
export function keepRawMessage(parsed: object, raw: RawKafkaMessage): void {
  Object.defineProperty(parsed, RAW_MESSAGE, { value: raw, enumerable: false });
}

/** The raw bytes kept on `parsed`, or undefined when the transport did not keep them. */
export function rawMessageOf(parsed: unknown): RawKafkaMessage | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  return (parsed as Record<symbol, RawKafkaMessage | undefined>)[RAW_MESSAGE];
}
