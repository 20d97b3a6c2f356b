import { asError } from '../../common/errors/describe-error';
import { PublishRejectedError } from '../errors/publish-rejected.error';
import { PublisherConfigurationError } from '../errors/publisher-configuration.error';
import type { PublishOutcome } from '../outbox-publisher.interface';
import type { KafkaErrorClass } from './kafka-error.classifier';

/**
 * The outcome of events whose send to `topic` (and `partition`, when known) failed with `error`:
 * a size or invalid-topic error is `fatal`; an unknown or unauthorized topic, or a refusing
 * partition, holds back that destination alone; a connection problem pauses everything, and so
 * does a configuration error, reported as one (`PublisherConfigurationError`).
 */
export function failedSendOutcome(
  error: unknown,
  cls: KafkaErrorClass,
  topic: string,
  partition?: number,
): PublishOutcome {
  const cause = asError(error);
  if (cls.scope === 'configuration') {
    const failure = new PublisherConfigurationError(
      cls.type ?? cause.name,
      `Kafka did not accept the event for topic "${topic}": ${cause.message}`,
      { topic, kafkaError: cls.type },
    );
    (failure as Error & { cause?: unknown }).cause = cause;
    return { status: 'retriable', error: failure, scope: 'broker' };
  }
  const fatal = cls.scope === 'size' || cls.scope === 'invalid-topic';
  const failure = new PublishRejectedError(
    `Kafka ${fatal ? 'rejected' : 'did not accept'} the event for topic "${topic}"` +
      `${cls.type ? ` (${cls.type})` : ''}: ${cause.message}`,
    fatal,
    { topic, kafkaError: cls.type },
  );
  (failure as Error & { cause?: unknown }).cause = cause;
  if (fatal) return { status: 'fatal', error: failure };
  if (cls.scope === 'topic' || cls.scope === 'partition') {
    const destination =
      cls.scope === 'partition' && partition !== undefined ? `${topic}#${partition}` : topic;
    return { status: 'retriable', error: failure, scope: 'destination', destination };
  }
  return {
    status: 'retriable',
    error: failure,
    scope: cls.scope === 'broker' ? 'broker' : 'event',
  };
}
