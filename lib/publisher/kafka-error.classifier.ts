/**
 * Kafka error types (kafkajs `KafkaJSProtocolError.type`) the broker will keep returning for the
 * same message whatever we do: the event goes to the dead-letter collection without retries.
 * `UNKNOWN_TOPIC_OR_PARTITION` is only final after kafkajs' own retries (its metadata refresh and
 * backoff, a bounded wait) gave up, which is how it reaches us.
 */
export const FATAL_KAFKA_ERROR_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'INVALID_RECORD',
]);

/** Types that may concern only some messages of a batch; the publisher isolates them. */
export const SIZE_ERROR_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
]);

export interface KafkaErrorClass {
  fatal: boolean;
  /** The first Kafka protocol error type found in the error chain, e.g. `MESSAGE_TOO_LARGE`. */
  type?: string;
}

/** Walks kafkajs' wrappers (`originalError`, `cause`, aggregate `errors`) for protocol types. */
export function kafkaErrorTypes(error: unknown): string[] {
  const types: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): void => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 8) return;
    seen.add(value);
    const candidate = value as {
      type?: unknown;
      originalError?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof candidate.type === 'string') types.push(candidate.type);
    visit(candidate.originalError, depth + 1);
    visit(candidate.cause, depth + 1);
    if (Array.isArray(candidate.errors)) {
      for (const inner of candidate.errors) visit(inner, depth + 1);
    }
  };
  visit(error, 0);
  return types;
}

/** Fatal when any protocol error in the chain is one the broker will never accept. */
export function classifyKafkaError(error: unknown): KafkaErrorClass {
  const types = kafkaErrorTypes(error);
  const fatalType = types.find((type) => FATAL_KAFKA_ERROR_TYPES.has(type));
  if (fatalType !== undefined) return { fatal: true, type: fatalType };
  return { fatal: false, type: types[0] };
}
