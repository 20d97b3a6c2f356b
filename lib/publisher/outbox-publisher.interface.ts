import type { OutboxEventRecord } from '../common/envelope';

/** The broker accepted the event (for Kafka: acknowledged by all in-sync replicas). */
export interface PublishOk {
  status: 'ok';
}
/** The event was not accepted but may be on a later attempt (broker down, leader moving...). */
export interface PublishRetriable {
  status: 'retriable';
  error: Error;
  /**
   * The broker (or the way to it) is unavailable; nothing is wrong with this event. The relay
   * then pauses all publishing with backoff and retries later, without counting an attempt
   * against the event (a long outage dead-letters nothing).
   */
  outage?: boolean;
}
/** The broker will never accept this event (too large, invalid or unknown topic...). */
export interface PublishFatal {
  status: 'fatal';
  error: Error;
}
export type PublishOutcome = PublishOk | PublishRetriable | PublishFatal;

/**
 * Where the relay sends events. One default implementation (`KafkaPublisher`); provide your own
 * with the `relay.publisher` option.
 *
 * Contract of `publish`:
 * - returns one outcome per event, in the order of `events`, and does not throw
 *   (a thrown error is taken as `retriable` for every event of the call);
 * - events of one aggregate come in commit order; they must be sent in that order, and an event
 *   must not be reported `ok` after an earlier event of the same aggregate in the same call was
 *   reported `retriable` (send nothing more of that aggregate instead: report it `retriable`);
 * - the relay never has two calls in flight that contain events of the same aggregate.
 */
export interface OutboxPublisher {
  connect(): Promise<void>;
  publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]>;
  /** Flushes what is in flight and closes. Must not throw. */
  disconnect(): Promise<void>;
}
