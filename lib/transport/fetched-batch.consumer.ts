import type { Logger } from '@nestjs/common';
import type { EachBatchPayload, EachMessagePayload, KafkaMessage } from 'kafkajs';
import {
  currentBatchFailed,
  type IdempotentBatchTarget,
} from '../consumer/nest/idempotent-batch.target';
import { TENANT_HEADER } from '../tenants/tenant.header';
import { planRuns, type RunCandidate } from './fetched-batch.planner';

/** A message's `ce_tenant` header as text (batches are cut where it changes). */
function tenantOf(message: KafkaMessage): string | undefined {
  const value = message.headers?.[TENANT_HEADER];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** What `consumeFetchedBatch` needs from the transport. */
export interface FetchedBatchSteps {
  /** The batch target of a message (its handler's consumer), or undefined: applied on its own. */
  targetOf(
    message: KafkaMessage,
    topic: string,
    partition: number,
  ): Promise<IdempotentBatchTarget | undefined>;
  /** One message through Nest's pipeline, as kafkajs' `eachMessage` would run it. */
  handle(payload: EachMessagePayload): Promise<void>;
  /** Whether the partition was paused (a redelivery's backoff): stop until it is resumed. */
  isPaused(topic: string, partition: number): boolean;
  logger: Pick<Logger, 'debug'>;
}

/**
 * kafkajs' `eachBatch` for `OutboxKafkaServer`: the messages fetched for one partition, in order.
 * Consecutive events of one `@IdempotentHandler` consumer (`planRuns`) are tried as one
 * transaction (`applyBatch`): each still goes through Nest's pipeline (guards, pipes,
 * interceptors, filters) inside it; committed, their offsets are resolved and committed after.
 * Not committed, the same messages are delivered again one at a time, as `eachMessage` does
 * (which is what every other message gets): a throw ends the batch there, unacknowledged, and
 * kafkajs fetches again from the last resolved offset. A rebalance (a failed heartbeat) inside a
 * batch ends it without the per-event pass: the partition's next owner starts from the offsets.
 */
export async function consumeFetchedBatch(
  payload: EachBatchPayload,
  steps: FetchedBatchSteps,
): Promise<void> {
  const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale, pause } =
    payload;
  const { topic, partition } = batch;
  const stopped = () => !isRunning() || isStale() || steps.isPaused(topic, partition);
  const one = (message: KafkaMessage) =>
    steps.handle({ topic, partition, message, heartbeat, pause });
  const candidates: RunCandidate<Fetched>[] = [];
  for (const message of batch.messages) {
    const target = await steps.targetOf(message, topic, partition);
    const tenant = tenantOf(message);
    const group = target && {
      runtime: target.runtime,
      consumer: target.settings.consumer,
      ...target.runtime.batchLimits,
      ...(tenant !== undefined ? { tenant } : {}),
    };
    candidates.push({
      item: { message, target },
      bytes: sizeOf(message),
      ...(group ? { group } : {}),
    });
  }
  for (const run of planRuns(candidates)) {
    if (stopped()) return;
    const messages = run.items.map((fetched) => fetched.message);
    if (run.group) {
      let rebalance: { error: unknown } | undefined;
      const { runtime } = run.items[0].target!;
      const settings = run.items.map((fetched) => fetched.target!.settings);
      const headers = messages.map((message) => message.headers);
      const result = await runtime.applyBatch(settings, headers, async () => {
        for (const message of messages) {
          await one(message);
          if (currentBatchFailed()) return;
          try {
            await heartbeat();
          } catch (error) {
            rebalance = { error };
            throw error;
          }
        }
      });
      if (result.committed) {
        for (const message of messages) resolveOffset(message.offset);
        await commitOffsetsIfNecessary();
        continue;
      }
      if (rebalance) throw rebalance.error;
      steps.logger.debug(
        `${topic}[${partition}]@${messages[0].offset}: ${messages.length} events again one at a time: ${result.error.message}`,
      );
    }
    for (const message of messages) {
      if (stopped()) return;
      await one(message);
      resolveOffset(message.offset);
      await heartbeat();
      await commitOffsetsIfNecessary();
    }
  }
}

interface Fetched {
  message: KafkaMessage;
  target: IdempotentBatchTarget | undefined;
}

/** What a message weighs against `consumer.batch.maxBytes`: value, key and headers. */
function sizeOf(message: KafkaMessage): number {
  let bytes = (message.value?.length ?? 0) + (message.key?.length ?? 0);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    bytes += name.length;
    for (const v of [value].flat()) bytes += v?.length ?? 0;
  }
  return bytes;
}
