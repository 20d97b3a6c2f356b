import { OutboxError } from '../../common/errors/outbox.error';

/** A topic name Kafka would refuse (characters, length, `.`/`..`). Never retried. */
export class InvalidTopicError extends OutboxError {
  constructor(
    readonly topic: string,
    problem: string,
  ) {
    super(
      `Invalid Kafka topic name ${JSON.stringify(topic.length > 300 ? `${topic.slice(0, 300)}...` : topic)}: ${problem}. ` +
        `Topic names are 1 to 249 characters of [a-zA-Z0-9._-] and not "." or "..". ` +
        `Check "relay.topic" / "relay.topicPrefix" and the event's aggregateType.`,
      'OUTBOX_INVALID_TOPIC',
      { topic },
    );
  }
}
