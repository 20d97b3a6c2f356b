import { SendAbortedError } from './kafka.sender';
import type { KafkaSender, PartitionCountOptions, TopicBatch } from './kafka.sender';

/**
 * `sender` for an idempotent producer (`relay.kafka.idempotent: true`): sends go one at a time,
 * and after a send that failed, the producer is replaced before the next one starts.
 *
 * Why: an idempotent producer numbers each partition's batches (producer id, first sequence);
 * the broker stores a batch whose sequence it expects and answers a repeat of the batch it last
 * stored as a duplicate, with success, storing nothing. When a send fails with an outcome the
 * client cannot know (the broker stored the batch, the answer was lost), kafkajs rolls its
 * sequence back (`producer/sendMessages.js`) and platformatic never advanced it; the relay then
 * sends other events (its next batch, or the publisher's own resend of each failed group): a
 * batch with the same sequence and record count is answered as that duplicate, and its events
 * would be marked published without being in Kafka. A new producer (new producer id, sequences
 * from 0) cannot collide with anything the old one sent. One send at a time: a send queued
 * inside the client behind the failed one would still carry the old producer id.
 *
 * A `SendAbortedError` is raised before anything was sent: the producer is kept.
 */
export function idempotentSends(sender: KafkaSender): KafkaSender {
  return new OneSendAtATime(sender);
}

class OneSendAtATime implements KafkaSender {
  /** Settles when the last send queued (and the replacement after it, if it failed) is done. */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly inner: KafkaSender) {}

  readonly connect = (): Promise<void> => this.inner.connect();
  readonly partitionCount = (topic: string, options?: PartitionCountOptions): Promise<number> =>
    this.inner.partitionCount(topic, options);
  readonly replaceProducer = (): Promise<void> => this.inner.replaceProducer();
  readonly disconnect = (): Promise<void> => this.inner.disconnect();

  send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    const sent = this.tail.then(() => this.inner.send(batches, signal));
    this.tail = sent.then(
      () => undefined,
      (error: unknown) => (error instanceof SendAbortedError ? undefined : this.replace()),
    );
    return sent;
  }

  /** No log line here: the publisher runs under the relay simulation, on its ports only. */
  private async replace(): Promise<void> {
    await this.inner.replaceProducer().catch(() => undefined);
  }
}
