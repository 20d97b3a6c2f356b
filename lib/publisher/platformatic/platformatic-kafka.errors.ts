/**
 * `@platformatic/kafka`'s errors in the shape of kafkajs' (see `KafkaSender`), so that
 * `classifyKafkaError` sorts both clients' errors into the same scopes: by code, a protocol
 * error keeps its broker error id as `type`, per-partition or per-broker errors (`RESPONSE`,
 * `MULTIPLE`) become an aggregate of the inner ones, converted, and anything else keeps no
 * protocol type (like kafkajs' own client errors). `PLT_KFK_USER` "Unknown topic <name>.": the
 * client's metadata call turns the broker's UNKNOWN_TOPIC_OR_PARTITION into this error and drops
 * the original (1.35: base.js), so it is read back from the message (the contract suite pins
 * it). The client's error stays on `clientError` (not walked by the classifier).
 */
const NAMES: Record<string, string> = {
  PLT_KFK_PROTOCOL: 'KafkaJSProtocolError',
  PLT_KFK_RESPONSE: 'KafkaJSAggregateError',
  PLT_KFK_MULTIPLE: 'KafkaJSAggregateError',
  PLT_KFK_NETWORK: 'KafkaJSConnectionError',
  PLT_KFK_TIMEOUT: 'KafkaJSRequestTimeoutError',
  PLT_KFK_AUTHENTICATION: 'KafkaJSSASLAuthenticationError',
};

/** The message of the client's own unknown-topic error. */
const UNKNOWN_TOPIC = /^Unknown topic .*\.$/;

type ClientError = Partial<Record<'code' | 'apiId' | 'canRetry' | 'cause' | 'errors', unknown>>;

export interface KafkajsShapedError extends Error {
  type?: string;
  retriable?: boolean;
  errors?: Error[];
  cause?: unknown;
  clientError?: unknown;
}

export function asKafkajsError(error: unknown): unknown {
  if (!isClientError(error)) return error;
  const converted = convert(error, 0);
  converted.clientError = error;
  return converted;
}

function isClientError(value: unknown): value is ClientError & Error {
  return (
    value instanceof Error &&
    typeof (value as ClientError).code === 'string' &&
    ((value as ClientError).code as string).startsWith('PLT_KFK_')
  );
}

function convert(error: ClientError & Error, depth: number): KafkajsShapedError {
  const code = error.code as string;
  const converted: KafkajsShapedError = new Error(error.message);
  converted.name = NAMES[code] ?? 'KafkaJSError';
  if (code === 'PLT_KFK_PROTOCOL' && typeof error.apiId === 'string') converted.type = error.apiId;
  if (code === 'PLT_KFK_USER' && UNKNOWN_TOPIC.test(converted.message)) {
    converted.name = NAMES.PLT_KFK_PROTOCOL;
    converted.type = 'UNKNOWN_TOPIC_OR_PARTITION';
    converted.retriable = true;
    return converted;
  }
  converted.retriable = error.canRetry === true;
  if (depth < 8 && Array.isArray(error.errors)) {
    converted.errors = error.errors.map((inner: unknown) =>
      isClientError(inner) ? convert(inner, depth + 1) : (inner as Error),
    );
  }
  if (depth < 8 && error.cause !== undefined) {
    converted.cause = isClientError(error.cause) ? convert(error.cause, depth + 1) : error.cause;
  }
  return converted;
}
