import type { OutboxEventRecord } from '../documents/outbox-event.document';

/** The broker accepted the event (for Kafka: acknowledged by all in-sync replicas). */
export interface PublishOk {
  status: 'ok';
}

/**
 * What a retriable failure concerns, which decides what the relay holds back:
 * - `event` (default): something about this event; the attempt counts, the event is retried
 *   with backoff and dead-lettered after `maxAttempts`. Only its aggregate waits.
 * - `destination`: one destination (for Kafka a topic, or a partition of one) refuses for now
 *   (unknown topic, no authorization, not enough replicas, leader moving...). No attempt
 *   counts and nothing is dead-lettered; only events bound there wait, and the relay retries
 *   the destination with backoff and says so until it accepts again.
 * - `broker`: the broker, or the way to it, is unavailable. No attempt counts; all
 *   publishing pauses with backoff.
 */
export type PublishFailureScope = 'event' | 'destination' | 'broker';

/** The event was not accepted but may be on a later attempt. */
export interface PublishRetriable {
  status: 'retriable';
  error: Error;
  /** Default `event`. */
  scope?: PublishFailureScope;
  /** With scope `destination`: which one (one of `destinationsOf(event)`). */
  destination?: string;
  /** Deprecated alias of `scope: 'broker'`. */
  outage?: boolean;
}

/** The broker will never accept this event (too large, invalid topic...): dead-lettered at once. */
export interface PublishFatal {
  status: 'fatal';
  error: Error;
}

export type PublishOutcome = PublishOk | PublishRetriable | PublishFatal;

/** What the relay tells the publisher about one `publish` call. */
export interface PublishContext {
  /**
   * Aborted once the relay gave up on this call (its lease ran out, or a stop timed out): send
   * nothing more for it (no retry, no fallback) and report the rest `retriable`. Another instance
   * may already publish these aggregates; a late send would break their order.
   */
  signal?: AbortSignal;
  /**
   * Whether the relay may still send for this call (its lease is valid on its own clock). Read
   * right before each produce request, so a relay paused meanwhile (GC, a stalled event loop)
   * sends nothing once its lease ran out: the call is abandoned as if `signal` were aborted.
   */
  mayStillSend?: () => boolean;
}

/**
 * Where the relay sends events. One default implementation (`KafkaPublisher`); provide your own
 * with the `relay.publisher` option.
 *
 * Contract of `publish`:
 * - returns one outcome per event, in the order of `events`, and does not throw
 *   (a thrown error is taken as a `broker` failure of every event of the call);
 * - events of one aggregate come in commit order; they must be sent in that order, and an event
 *   must not be reported `ok` after an earlier event of the same aggregate in the same call was
 *   not (send nothing more of that aggregate instead: report it `retriable`);
 * - the relay never has two calls in flight that contain events of the same aggregate;
 * - once `context.signal` is aborted, nothing more of the call is sent (see `PublishContext`).
 */
export interface OutboxPublisher {
  connect(): Promise<void>;
  publish(
    events: readonly OutboxEventRecord[],
    context?: PublishContext,
  ): Promise<PublishOutcome[]>;
  /** Flushes what is in flight and closes. Must not throw. */
  disconnect(): Promise<void>;
  /**
   * Bytes the event takes on the wire (bounds batches and memory in bytes). Default: the
   * JSON length of its payload and headers.
   */
  sizeOf?(event: OutboxEventRecord): number;
  /**
   * Where the event goes, most general first (for Kafka `["Order", "Order#3"]`), matching the
   * `destination` of failures: while one of them is held, the relay does not send the event.
   */
  destinationsOf?(event: OutboxEventRecord): readonly string[];
}
