import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { InvalidTopicError } from './errors/invalid-topic.error';

const MAX_TOPIC_LENGTH = 249;
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]+$/;

/** Chooses the topic of an event. Must be a pure function of the event (same event, same topic). */
export type TopicRouter = (event: OutboxEventInput) => string;

/** Why Kafka would refuse `name` as a topic, or `undefined` when it is legal. */
export function topicNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string')
    return `must be a string, got ${name === null ? 'null' : typeof name}`;
  if (name.length === 0) return 'is empty';
  if (name === '.' || name === '..') return 'may not be "." or ".."';
  if (name.length > MAX_TOPIC_LENGTH)
    return `is ${name.length} characters long (max ${MAX_TOPIC_LENGTH})`;
  if (!LEGAL_TOPIC.test(name)) return 'contains characters other than [a-zA-Z0-9._-]';
  return undefined;
}

/**
 * The topic router the relay uses: `route(event)` when given, else `${prefix}${aggregateType}`.
 * The returned function validates every name it returns (throws `InvalidTopicError`).
 */
export function createTopicRouter(options: { route?: TopicRouter; prefix?: string }): TopicRouter {
  const prefix = options.prefix ?? '';
  const route = options.route ?? ((event: OutboxEventInput) => `${prefix}${event.aggregateType}`);
  let lastValid: string | undefined;
  return (event) => {
    let topic: unknown;
    try {
      topic = route(event);
    } catch (error) {
      throw new InvalidTopicError(
        '(router threw)',
        `the topic function failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // Most events go to the topic of the event before: checked once while it stays the same.
    if (topic !== lastValid) {
      const problem = topicNameProblem(topic);
      if (problem !== undefined) throw new InvalidTopicError(String(topic), problem);
      lastValid = topic as string;
    }
    return topic as string;
  };
}
