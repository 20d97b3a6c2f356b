/** Server error codes that mean "this node cannot take writes right now" (elections, shutdowns). */
const UNAVAILABLE_CODES = new Set([
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const UNAVAILABLE_NAMES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
]);

/**
 * True when `error` says MongoDB could not be reached or could not take writes (a network error,
 * no primary, an election, a transaction the driver itself labels transient), as opposed to an
 * error of the handler's own logic. Such a failure says nothing about the event: it is not counted
 * toward `maxFailures`; the partition is paused and the message delivered again, so an outage of
 * the database never dead-letters good events.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    errorLabels?: unknown;
    hasErrorLabel?: (label: string) => boolean;
  };
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
  if (typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) return true;
  const labels = Array.isArray(e.errorLabels) ? (e.errorLabels as unknown[]) : [];
  const labelled = (label: string) =>
    labels.includes(label) || (typeof e.hasErrorLabel === 'function' && e.hasErrorLabel(label));
  if (labelled('TransientTransactionError') || labelled('RetryableWriteError')) return true;
  // Mongoose queues operations while disconnected and gives up after `bufferTimeoutMS`.
  return typeof e.message === 'string' && /buffering timed out after/.test(e.message);
}
