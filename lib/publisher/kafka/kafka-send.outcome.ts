import { asError } from '../../common/errors/describe-error';
import { PublishRejectedError } from '../errors/publish-rejected.error';
import type { PublishOutcome } from '../outbox-publisher.interface';
import type { KafkaErrorClass } from './kafka-error.classifier';

/**
 * The outcome of events whose send to `topic` (and `partition`, when known) failed with `error`:
 * a size or invalid-topic error is `fatal`; an unknown or unauthorized topic, or a refusing
 * partition, holds back that destination alone; a connection problem pauses everything.
 */
export function failedSendOutcome(
  error: unknown,
  cls: KafkaErrorClass,
  topic: string,
  partition?: number,
): PublishOutcome {
  const fatal = cls.scope === 'size' || cls.scope === 'invalid-topic';
  const failure = rejected(error, cls.type, topic, fatal);
  if (fatal) return { status: 'fatal', error: failure };
  if (cls.scope === 'topic') {
    return { status: 'retriable', error: failure, scope: 'destination', destination: topic };
  }
  if (cls.scope === 'partition') {
    const destination = partition !== undefined ? `${topic}#${partition}` : topic;
    return { status: 'retriable', error: failure, scope: 'destination', destination };
  }
  return {
    status: 'retriable',
    error: failure,
    scope: cls.scope === 'broker' ? 'broker' : 'event',
  };
}

function rejected(error: unknown, type: string | undefined, topic: string, fatal: boolean): Error {
  const cause = asError(error);
  const result = new PublishRejectedError(
    `Kafka ${fatal ? 'rejected' : 'did not accept'} the event for topic "${topic}"` +
      `${type ? ` (${type})` : ''}: ${cause.message}`,
    fatal,
    { topic, kafkaError: type },
  );
  (result as Error & { cause?: unknown }).cause = cause;
  return result;
}
