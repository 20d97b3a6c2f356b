import { outboxChannels } from './diagnostic-channels';
import type {
  ConsumerDeadLetteredMessage,
  ConsumerEventMessage,
  RelayDeadLetteredMessage,
  RelayDestinationHeldMessage,
  RelayDestinationReleasedMessage,
  RelayEventMessage,
  RelayLeaseLostMessage,
  RelayLeaseTakenMessage,
  RelayPartitionHandedOverMessage,
  RelayRetryScheduledMessage,
} from './diagnostic-channels';

/** Where a consumed message came from. */
type MessageSource = Pick<ConsumerEventMessage, 'topic' | 'partition' | 'offset'>;

/**
 * The message builders, called only when their channel has a subscriber (an object, so that a
 * test can spy on them).
 */
export const diagnosticMessages = {
  /** Copies the fields (the event is the outbox document). */
  relayEvent({ eventId, eventType, aggregateType, aggregateId }: RelayEventMessage) {
    return { eventId, eventType, aggregateType, aggregateId } satisfies RelayEventMessage;
  },
  consumerEvent(consumer: string, eventId: string, { topic, partition, offset }: MessageSource) {
    return { consumer, eventId, topic, partition, offset } satisfies ConsumerEventMessage;
  },
};

/**
 * Publishes the relay's and consumers' events to their `node:diagnostics_channel` channels
 * (`OUTBOX_CHANNELS`). Each call checks `hasSubscribers` first: without a subscriber it costs
 * one property read and builds nothing. Called next to the metric each event counts.
 */
export const outboxDiagnostics = {
  /** The broker acknowledged these events. */
  relayPublished(items: readonly { event: RelayEventMessage }[]): void {
    const channel = outboxChannels.relayPublished;
    if (!channel.hasSubscribers) return;
    for (const item of items) channel.publish(diagnosticMessages.relayEvent(item.event));
  },

  relayRetryScheduled(
    event: RelayEventMessage,
    record: { attempts: number; nextAttemptAt: Date; error: string },
    maxAttempts: number,
  ): void {
    const channel = outboxChannels.relayRetryScheduled;
    if (!channel.hasSubscribers) return;
    channel.publish({
      ...diagnosticMessages.relayEvent(event),
      attempts: record.attempts,
      maxAttempts,
      nextAttemptAt: record.nextAttemptAt,
      error: record.error,
    } satisfies RelayRetryScheduledMessage);
  },

  relayDeadLettered(
    event: RelayEventMessage,
    record: { reason: RelayDeadLetteredMessage['reason']; attempts: number; error: string },
  ): void {
    const channel = outboxChannels.relayDeadLettered;
    if (!channel.hasSubscribers) return;
    channel.publish({
      ...diagnosticMessages.relayEvent(event),
      reason: record.reason,
      attempts: record.attempts,
      error: record.error,
    } satisfies RelayDeadLetteredMessage);
  },

  relayDestinationHeld(destination: string, error: string, since: number): void {
    const channel = outboxChannels.relayDestinationHeld;
    if (!channel.hasSubscribers) return;
    channel.publish({
      destination,
      error,
      since: new Date(since),
    } satisfies RelayDestinationHeldMessage);
  },

  relayDestinationReleased(
    destination: string,
    failures: number,
    heldMs: number,
    reason: RelayDestinationReleasedMessage['reason'],
  ): void {
    const channel = outboxChannels.relayDestinationReleased;
    if (!channel.hasSubscribers) return;
    channel.publish({
      destination,
      failures,
      heldMs: Math.max(0, heldMs),
      reason,
    } satisfies RelayDestinationReleasedMessage);
  },

  relayLeaseTaken(relay: string, owner: string, fencing: number | null): void {
    const channel = outboxChannels.relayLeaseTaken;
    if (!channel.hasSubscribers) return;
    channel.publish({ relay, owner, fencing } satisfies RelayLeaseTakenMessage);
  },

  relayLeaseLost(relay: string, owner: string, reason: string, released: boolean): void {
    const channel = outboxChannels.relayLeaseLost;
    if (!channel.hasSubscribers) return;
    channel.publish({ relay, owner, reason, released } satisfies RelayLeaseLostMessage);
  },

  relayPartitionHandedOver(
    relay: string,
    owner: string,
    partition: number,
    partitions: number,
    share: number,
  ): void {
    const channel = outboxChannels.relayPartitionHandedOver;
    if (!channel.hasSubscribers) return;
    channel.publish({
      relay,
      owner,
      partition,
      partitions,
      share,
    } satisfies RelayPartitionHandedOverMessage);
  },

  consumerApplied(consumer: string, eventId: string, message: MessageSource): void {
    const channel = outboxChannels.consumerApplied;
    if (!channel.hasSubscribers) return;
    channel.publish(diagnosticMessages.consumerEvent(consumer, eventId, message));
  },

  consumerSkipped(consumer: string, eventId: string, message: MessageSource): void {
    const channel = outboxChannels.consumerSkipped;
    if (!channel.hasSubscribers) return;
    channel.publish(diagnosticMessages.consumerEvent(consumer, eventId, message));
  },

  consumerDeadLettered(letter: {
    consumer: string;
    eventId: string | null;
    reason: string;
    attempts: number;
    lastError: string;
    message: MessageSource;
  }): void {
    const channel = outboxChannels.consumerDeadLettered;
    if (!channel.hasSubscribers) return;
    channel.publish({
      consumer: letter.consumer,
      eventId: letter.eventId,
      topic: letter.message.topic,
      partition: letter.message.partition,
      offset: letter.message.offset,
      reason: letter.reason,
      attempts: letter.attempts,
      error: letter.lastError,
    } satisfies ConsumerDeadLetteredMessage);
  },
};
