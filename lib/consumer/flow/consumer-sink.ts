import { backoffDelay, type BackoffPolicy } from '../../common/backoff';
import { describeError } from '../../common/errors/describe-error';
import type { ConsumedMessage } from '../input/consumed-message';
import type {
  ConsumerFailureStore,
  DeadLetter,
  DeadLetterPublisher,
  FlowLogger,
} from '../consume.ports';

/** The failure/dead-letter store refused a write: the message cannot be brought to an end now. */
export class SinkUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the consumer failure store is unavailable: ${describeError(cause)}`);
    this.name = 'SinkUnavailableError';
  }
}

/** Backoff of the store while it refuses writes, and of a dead-letter topic that cannot be reached. */
export const SINK_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000 };
export const TOPIC_BACKOFF: BackoffPolicy = { initialMs: 5000, maxMs: 5 * 60_000 };
/** Most dead letters held in memory while the store is unavailable. */
const MAX_PENDING = 10_000;

interface TopicState {
  since: Date;
  failures: number;
  retryAt: number;
  lastError: string;
}

/**
 * Where failures and dead letters go: the MongoDB store (the dead letter of record) and, when
 * configured, a copy on a dead-letter topic.
 *
 * - The store is required: when it refuses a write, `SinkUnavailableError` is thrown (the caller
 *   pauses the partition and the message is delivered again after `retryDelayMs()`), a dead letter
 *   that could not be written is held in memory and written first when its message comes back,
 *   and the outage is logged once when it starts and once when it ends.
 * - The topic copy is best effort and bounded: one try per dead letter (the producer's own
 *   retries included); when it fails, the dead letter is stored with
 *   `topicCopy: { published: false, error }` and the topic is not tried again for a growing delay,
 *   so a missing or unreachable dead-letter topic never holds a partition. Logged once per state
 *   change per topic.
 */
export class ConsumerSink {
  private readonly pending = new Map<string, DeadLetter>();
  private storeDown?: { since: Date; failures: number };
  private readonly topics = new Map<string, TopicState>();

  constructor(
    private readonly store: ConsumerFailureStore,
    private readonly logger: FlowLogger,
    private readonly now: () => number = Date.now,
  ) {}

  async recordFailure(
    consumer: string,
    eventId: string,
    failure: { at: Date; error: string },
    message: ConsumedMessage,
  ): Promise<number> {
    try {
      const attempts = await this.store.recordFailure(consumer, eventId, failure, message);
      this.databaseAccepted();
      return attempts;
    } catch (error) {
      throw this.databaseUnavailable(error);
    }
  }

  async clearFailures(consumer: string, eventId: string): Promise<void> {
    try {
      await this.store.clearFailures(consumer, eventId);
    } catch (error) {
      this.logger.debug(
        `${consumer}: could not clear the failures of ${eventId}: ${describeError(error)}`,
      );
    }
  }

  /** Stores `letter` (after trying its topic copy, when `topic` is set). */
  async deadLetter(
    letter: DeadLetter,
    topic?: string,
    publisher?: DeadLetterPublisher,
  ): Promise<void> {
    const key = pendingKey(letter.consumer, letter.message);
    if (topic && !letter.topicCopy)
      letter.topicCopy = await this.copyToTopic(topic, letter, publisher);
    try {
      await this.store.deadLetter(letter);
    } catch (error) {
      if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      this.pending.set(key, letter);
      throw this.databaseUnavailable(error);
    }
    this.pending.delete(key);
    this.databaseAccepted();
  }

  /** A dead letter of this message that could not be stored yet. */
  pendingDeadLetter(consumer: string, message: ConsumedMessage): DeadLetter | undefined {
    return this.pending.get(pendingKey(consumer, message));
  }

  /** How long to wait before the store is tried again (grows while it stays unavailable). */
  retryDelayMs(): number {
    return backoffDelay(this.storeDown?.failures ?? 1, SINK_BACKOFF);
  }

  /**
   * The store refused a write, or the database refused a handler's transaction for reasons of its
   * own (see `isDatabaseUnavailable`): one outage, with one backoff, logged when it starts.
   */
  databaseUnavailable(error: unknown): SinkUnavailableError {
    if (!this.storeDown) {
      this.storeDown = { since: new Date(this.now()), failures: 0 };
      this.logger.error(
        `MongoDB refuses the consumers' writes: ${describeError(error)}. The partitions of the` +
          ' messages concerned are paused and their messages delivered again, with backoff, until it accepts them.',
      );
    }
    this.storeDown.failures++;
    return new SinkUnavailableError(error);
  }

  /** The store took a write, or a handler's transaction committed: logs the end of an outage. */
  databaseAccepted(): void {
    if (!this.storeDown) return;
    const { since, failures } = this.storeDown;
    this.storeDown = undefined;
    this.logger.log(
      `MongoDB accepts the consumers' writes again (unavailable since ${since.toISOString()}, ${failures} refused).`,
    );
  }

  private async copyToTopic(
    topic: string,
    letter: DeadLetter,
    publisher: DeadLetterPublisher | undefined,
  ): Promise<{ topic: string; published: boolean; error?: string }> {
    if (!publisher) {
      return { topic, published: false, error: 'the transport provided no Kafka producer' };
    }
    const state = this.topics.get(topic);
    const now = this.now();
    if (state && now < state.retryAt) {
      return {
        topic,
        published: false,
        error: `not tried: unreachable since ${state.since.toISOString()} (${state.lastError})`,
      };
    }
    try {
      await publisher.publish(topic, letter);
    } catch (error) {
      const failures = (state?.failures ?? 0) + 1;
      const lastError = describeError(error);
      this.topics.set(topic, {
        since: state?.since ?? new Date(now),
        failures,
        retryAt: now + backoffDelay(failures, TOPIC_BACKOFF),
        lastError,
      });
      if (!state) {
        this.logger.error(
          `The dead-letter topic ${topic} cannot be reached (${lastError}). Dead letters are kept in` +
            ' MongoDB with topicCopy.published = false; the topic is tried again with backoff.',
        );
      }
      return { topic, published: false, error: lastError };
    }
    if (state) {
      this.topics.delete(topic);
      this.logger.log(
        `The dead-letter topic ${topic} is reachable again (unreachable since ${state.since.toISOString()}).`,
      );
    }
    return { topic, published: true };
  }
}

function pendingKey(consumer: string, message: ConsumedMessage): string {
  return `${consumer}\u0000${message.topic}\u0000${message.partition}\u0000${message.offset}`;
}
