import type { KafkaSender, PartitionCountOptions } from './kafka.sender';

/** How long a topic's partition count is used before it is read again (kafkajs' `metadataMaxAge`). */
export const METADATA_TTL_MS = 5 * 60_000;

/**
 * The partition count of each topic the publisher sends to, read through the sender once its
 * last read is `METADATA_TTL_MS` old (one read at a time per topic and kind).
 *
 * A count above the largest read before for a topic replaces the sender's producer: a producer
 * caches its metadata (kafkajs for `metadataMaxAge`, and has no public way to refresh it) and
 * may not know the new partitions; a new one reads them on its first send. The same holds when a
 * send finds a partition missing from the producer's metadata (`producerLacks`).
 */
export class PartitionCounts {
  private readonly counts = new Map<string, { count: number; at: number }>();
  /** The largest count read per topic; kept when a topic's count is forgotten. */
  private readonly largest = new Map<string, number>();
  private readonly fetching = new Map<string, Promise<number>>();

  constructor(
    private readonly sender: KafkaSender,
    private readonly now: () => number,
  ) {}

  /** The count last read, whatever its age; undefined if never read (or forgotten). */
  known(topic: string): number | undefined {
    return this.counts.get(topic)?.count;
  }

  read(topic: string, options?: PartitionCountOptions): Promise<number> {
    const known = this.counts.get(topic);
    if (known && this.now() - known.at < METADATA_TTL_MS) return Promise.resolve(known.count);
    const key = options?.autoCreate ? `${topic}\0autoCreate` : topic;
    let fetching = this.fetching.get(key);
    if (!fetching) {
      fetching = this.sender
        .partitionCount(topic, options)
        .then(async (count) => {
          this.counts.set(topic, { count, at: this.now() });
          const before = this.largest.get(topic) ?? count;
          if (count >= before) this.largest.set(topic, count);
          if (count > before) await this.sender.replaceProducer();
          return count;
        })
        .finally(() => this.fetching.delete(key));
      this.fetching.set(key, fetching);
    }
    return fetching;
  }

  /** The topic is read again before its next use (it was refused as a topic). */
  forget(topic: string): void {
    this.counts.delete(topic);
  }

  /** A send found a partition its producer's metadata lacks: the next send uses a new producer. */
  producerLacks(): Promise<void> {
    return this.sender.replaceProducer();
  }
}
