import { KafkaSendTimeoutError } from '../errors/kafka-send-timeout.error';

/**
 * `work`, or `KafkaSendTimeoutError` once `timeoutMs` passed without it settling. A Kafka client
 * may retry a send for ever (platformatic's idempotent producer raises `retries` to
 * `MAX_SAFE_INTEGER`) or hang on a connection that never answers: the relay must hear back and
 * hold the events rather than wait silently. `work` goes on (nothing can stop a request already
 * sent); its late outcome is ignored. The timer is cleared when `work` settles first, and does
 * not keep the process alive. Real time: the real senders use it, not the publisher (the
 * relay simulation runs the publisher on virtual time).
 */
export function withSendDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new KafkaSendTimeoutError(timeoutMs)), timeoutMs);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
