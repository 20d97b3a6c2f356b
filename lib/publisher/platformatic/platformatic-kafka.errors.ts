/**
 * `@platformatic/kafka`'s errors in the shape of kafkajs' (see `KafkaSender`), so that
 * `classifyKafkaError` sorts both clients' errors into the same scopes: by code, a protocol
 * error keeps its broker error id as `type`, per-partition or per-broker errors (`RESPONSE`, and
 * `MULTIPLE` from concurrent requests) become an aggregate of the inner ones, converted, and
 * anything else keeps no protocol type (like kafkajs' own client errors), with the name of
 * kafkajs' error for the same failure (`UNSUPPORTED_API`: `KafkaJSServerDoesNotSupportApiKey`...).
 *
 * A retried request fails with a `MULTIPLE` "<operation> failed <n> times." holding every
 * attempt (1.35: `kPerformWithRetry` in clients/base/base.js), where kafkajs keeps the last
 * (`KafkaJSNumberOfRetriesExceeded`, `cause`): it becomes that, its `cause` the last attempt
 * (a "Client closed while retrying" the client appends on close is not an attempt), and every
 * attempt stays on `attempts` (not walked by the classifier).
 *
 * `PLT_KFK_USER` "Unknown topic <name>.": the client's metadata call turns the broker's
 * UNKNOWN_TOPIC_OR_PARTITION into this error and drops the original (1.35: base.js), so it is
 * read back from the message (the contract suite pins it). The client's error stays on
 * `clientError` (not walked by the classifier).
 */
const NAMES: Record<string, string> = {
  PLT_KFK_PROTOCOL: 'KafkaJSProtocolError',
  PLT_KFK_RESPONSE: 'KafkaJSAggregateError',
  PLT_KFK_MULTIPLE: 'KafkaJSAggregateError',
  PLT_KFK_NETWORK: 'KafkaJSConnectionError',
  PLT_KFK_TIMEOUT: 'KafkaJSRequestTimeoutError',
  PLT_KFK_AUTHENTICATION: 'KafkaJSSASLAuthenticationError',
  PLT_KFK_UNSUPPORTED_API: 'KafkaJSServerDoesNotSupportApiKey',
  PLT_KFK_UNSUPPORTED_COMPRESSION: 'KafkaJSNotImplemented',
  PLT_KFK_UNSUPPORTED_FORMAT: 'KafkaJSNotImplemented',
  PLT_KFK_UNSUPPORTED: 'KafkaJSNotImplemented',
  // Arguments or options the client refused before sending (kafkajs: "Invalid topic"...).
  PLT_KFK_USER: 'KafkaJSNonRetriableError',
};

/** The message of the client's own unknown-topic error. */
const UNKNOWN_TOPIC = /^Unknown topic .*\.$/;
/** The message of a retried request's aggregate of attempts (base.js `kPerformWithRetry`). */
const RETRIES = /^\S+ failed \d+ times\.$/;
/** What base.js appends to the attempts when the client closes while waiting to retry. */
const CLOSED_WHILE_RETRYING = /^Client closed while retrying /;

type ClientError = Partial<Record<'code' | 'apiId' | 'canRetry' | 'cause' | 'errors', unknown>>;

export interface KafkajsShapedError extends Error {
  type?: string;
  retriable?: boolean;
  errors?: Error[];
  /** A retried request's attempts, oldest first (the last is `cause`). */
  attempts?: unknown[];
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

function convertAny(error: unknown, depth: number): unknown {
  return isClientError(error) ? convert(error, depth) : error;
}

/** A retry aggregate as kafkajs reports retries run out: the last attempt as `cause`. */
function retried(
  converted: KafkajsShapedError,
  errors: unknown[],
  depth: number,
): KafkajsShapedError {
  const tried = errors.filter(
    (attempt) => !(attempt instanceof Error && CLOSED_WHILE_RETRYING.test(attempt.message)),
  );
  const last = tried.at(-1) ?? errors.at(-1);
  converted.name = 'KafkaJSNumberOfRetriesExceeded';
  converted.retriable = false;
  if (depth < 8) {
    converted.attempts = errors.map((attempt) => convertAny(attempt, depth + 1));
    converted.cause = converted.attempts[errors.indexOf(last)];
  }
  if (last instanceof Error) converted.message = `${converted.message} Last: ${last.message}`;
  return converted;
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
  if (code === 'PLT_KFK_USER' && CLOSED_WHILE_RETRYING.test(converted.message)) {
    converted.name = 'KafkaJSConnectionClosedError';
  }
  converted.retriable = error.canRetry === true;
  if (code === 'PLT_KFK_MULTIPLE' && RETRIES.test(error.message) && Array.isArray(error.errors)) {
    return retried(converted, error.errors as unknown[], depth);
  }
  if (depth < 8 && Array.isArray(error.errors)) {
    converted.errors = error.errors.map((inner: unknown) => convertAny(inner, depth + 1) as Error);
  }
  if (depth < 8 && error.cause !== undefined) converted.cause = convertAny(error.cause, depth + 1);
  return converted;
}
