import { describeError } from '../../common/errors/describe-error';
import { toConsumedMessage, type KafkaContextLike } from '../input/consumed-message';
import { ConsumerRetryError } from '../consumer.errors';
import type { Delivery } from '../flow/idempotent-consume.flow';
import { pausePartition } from '../flow/partition-pauser';

/** A delivery and the transport objects that come with it (from the `KafkaContext`). */
export interface KafkaDelivery extends Delivery {
  /** kafkajs' consumer (to pause the partition). */
  kafkaConsumer: unknown;
  /** kafkajs' producer of the transport (dead-letter topic copies). */
  producer: unknown;
}

export function kafkaDelivery(ctx: KafkaContextLike): KafkaDelivery {
  const heartbeat = ctx.getHeartbeat?.();
  return {
    message: toConsumedMessage(ctx),
    heartbeat: async () => {
      if (typeof heartbeat === 'function') await (heartbeat as () => Promise<void>)();
    },
    kafkaConsumer: ctx.getConsumer?.(),
    producer: ctx.getProducer?.(),
  };
}

/**
 * Ends a delivery unacknowledged: pauses its partition for `pauseMs` (when given and possible),
 * then returns the `ConsumerRetryError` to throw.
 */
export function redeliver(
  delivery: KafkaDelivery,
  reason: string,
  pauseMs: number | undefined,
  cause: unknown,
  context: Record<string, unknown>,
): ConsumerRetryError {
  const { topic, partition } = delivery.message;
  const paused =
    pauseMs !== undefined && pausePartition(delivery.kafkaConsumer, topic, partition, pauseMs);
  return new ConsumerRetryError(
    `${reason}${paused ? `; partition ${topic}[${partition}] paused for ${pauseMs} ms` : ''}` +
      (cause !== undefined ? ` (${describeError(cause)})` : ''),
    { ...context, topic, partition, offset: delivery.message.offset },
    cause,
    paused ? pauseMs : undefined,
  );
}
