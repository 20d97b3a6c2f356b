import { channel } from 'node:diagnostics_channel';
import type { Channel } from 'node:diagnostics_channel';

/**
 * The names of the `node:diagnostics_channel` channels the relay and `@IdempotentHandler`
 * consumers publish to. Subscribe with `subscribe(OUTBOX_CHANNELS.relayPublished, fn)` from
 * `node:diagnostics_channel`; nothing is built or sent while a channel has no subscriber.
 */
export const OUTBOX_CHANNELS = {
  /** `RelayEventMessage`: the broker acknowledged an event (once per publish, duplicates included). */
  relayPublished: 'nestjs-outbox:relay:published',
  /** `RelayRetryScheduledMessage`: a publish attempt failed; the event is tried again later. */
  relayRetryScheduled: 'nestjs-outbox:relay:retry-scheduled',
  /** `RelayDeadLetteredMessage`: the event was marked dead (out of attempts, or refused for good). */
  relayDeadLettered: 'nestjs-outbox:relay:dead-lettered',
  /** `RelayDestinationHeldMessage`: a topic (or one of its partitions) refuses events; they wait. */
  relayDestinationHeld: 'nestjs-outbox:relay:destination-held',
  /** `RelayDestinationReleasedMessage`: a held destination accepts events again. */
  relayDestinationReleased: 'nestjs-outbox:relay:destination-released',
  /** `RelayLeaseTakenMessage`: this instance leads (the single lease, or one partition's). */
  relayLeaseTaken: 'nestjs-outbox:relay:lease-taken',
  /** `RelayLeaseLostMessage`: leadership ended (lost, fenced off, or released on stop). */
  relayLeaseLost: 'nestjs-outbox:relay:lease-lost',
  /** `RelayPartitionHandedOverMessage`: this instance gives a partition up for the fair share. */
  relayPartitionHandedOver: 'nestjs-outbox:relay:partition-handed-over',
  /** `ConsumerEventMessage`: a handler applied an event (its transaction committed). */
  consumerApplied: 'nestjs-outbox:consumer:applied',
  /** `ConsumerEventMessage`: a delivery of an event already applied was skipped. */
  consumerSkipped: 'nestjs-outbox:consumer:skipped',
  /** `ConsumerDeadLetteredMessage`: a message was dead-lettered by a consumer. */
  consumerDeadLettered: 'nestjs-outbox:consumer:dead-lettered',
} as const;

export type OutboxChannelName = (typeof OUTBOX_CHANNELS)[keyof typeof OUTBOX_CHANNELS];

/** The event an outbox relay message is about. */
export interface RelayEventMessage {
  eventId: string;
  eventType: string;
  aggregateType: string;
  aggregateId: string;
}

export interface RelayRetryScheduledMessage extends RelayEventMessage {
  /** Failed attempts so far, this one included. */
  attempts: number;
  maxAttempts: number;
  /** When the next attempt may start (the database server's clock). */
  nextAttemptAt: Date;
  error: string;
}

export interface RelayDeadLetteredMessage extends RelayEventMessage {
  /** `max-attempts`: out of attempts; `rejected`: the broker will never accept it. */
  reason: 'max-attempts' | 'rejected';
  attempts: number;
  error: string;
}

export interface RelayDestinationHeldMessage {
  /** A topic (`orders`), or one partition of it: `topic#partition` (`orders#3`). */
  destination: string;
  error: string;
  /** When the hold began (the database server's clock). */
  since: Date;
}

export interface RelayDestinationReleasedMessage {
  destination: string;
  /** Failed attempts while held. */
  failures: number;
  heldMs: number;
  /**
   * `accepted`: the destination accepted an event again; `nothing-waits`: the hold ended
   * unprobed, no event waiting for it any more (dead-lettered, or published by another relay).
   */
  reason: 'accepted' | 'nothing-waits';
}

export interface RelayLeaseTakenMessage {
  /** The relay's name (`relay.name`; a partition's relay adds `.p<n>of<count>`). */
  relay: string;
  owner: string;
  /** The fencing number of the term; `null` without a lease (`lease.enabled: false`). */
  fencing: number | null;
}

export interface RelayLeaseLostMessage {
  relay: string;
  owner: string;
  /** Why leadership ended, as logged. */
  reason: string;
  /** True on a graceful stop: the lease is released on purpose, not lost. */
  released: boolean;
}

export interface RelayPartitionHandedOverMessage {
  relay: string;
  owner: string;
  partition: number;
  /** Partitions in the layout. */
  partitions: number;
  /** The fair share (most partitions per live instance). */
  share: number;
}

/** Where a consumed message came from. */
export interface ConsumerEventMessage {
  /** The consumer name (the dedupe scope). */
  consumer: string;
  eventId: string;
  topic: string;
  partition: number;
  offset: string;
}

export interface ConsumerDeadLetteredMessage extends Omit<ConsumerEventMessage, 'eventId'> {
  /** Null when the message carried no readable event id. */
  eventId: string | null;
  /** `DeadLetterReason`: bad input, `max-failures` or `unrecoverable`. */
  reason: string;
  /** Failed attempts counted before (0 for bad input). */
  attempts: number;
  error: string;
}

/** The channel objects, created once (publishing through a held `Channel` is the cheap path). */
export const outboxChannels = Object.fromEntries(
  Object.entries(OUTBOX_CHANNELS).map(([key, name]) => [key, channel(name)]),
) as { readonly [K in keyof typeof OUTBOX_CHANNELS]: Channel };
