import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender, TopicBatch } from './kafka.sender';
import { pendingEvent } from '../../../test/publisher/support/pending-event';

/**
 * An idempotent producer and the broker behind it, as Kafka has them: the producer numbers each
 * partition's batches (first sequence, record count) under its producer id; the broker stores a
 * batch whose first sequence is the next one it expects, answers a batch that repeats the last
 * one it stored (same producer id, same first sequence) as a duplicate, with success, and stores
 * nothing; anything else is OUT_OF_ORDER_SEQUENCE_NUMBER. When the answer to a stored batch is
 * lost, the client gives its sequence back (kafkajs rolls it back, platformatic never advanced
 * it) and rejects.
 */
class IdempotentCluster implements KafkaSender {
  readonly log: string[] = [];
  readonly replaced: number[] = [];
  /** Sends the client is working on at once, and the most seen. */
  inFlight = 0;
  maxInFlight = 0;
  /** The next answers to lose (the batch is stored, the client hears a timeout). */
  loseAnswers = 0;
  private producerId = 1;
  private sequences = new Map<string, number>();
  private readonly broker = new Map<string, { next: number; lastFirst: number }>();

  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async partitionCount(): Promise<number> {
    return 1;
  }
  async replaceProducer(): Promise<void> {
    this.replaced.push(this.log.length);
    this.producerId++;
    this.sequences = new Map();
  }

  async send(batches: readonly TopicBatch[]): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const taken: Array<[string, number]> = [];
      for (const { topic, messages } of batches) {
        const key = `${topic}#${messages[0].partition}`;
        const first = this.sequences.get(key) ?? 0;
        this.sequences.set(key, first + messages.length);
        taken.push([key, messages.length]);
        this.produce(`${this.producerId}/${key}`, first, messages.length, () =>
          this.log.push(...messages.map((m) => m.headers.ce_id)),
        );
      }
      if (this.loseAnswers > 0) {
        this.loseAnswers--;
        for (const [key, count] of taken) this.sequences.set(key, this.sequences.get(key)! - count);
        throw Object.assign(new Error('Request Produce timed out'), {
          name: 'KafkaJSRequestTimeoutError',
        });
      }
    } finally {
      this.inFlight--;
    }
  }

  private produce(partitionOfProducer: string, first: number, count: number, store: () => void) {
    const state = this.broker.get(partitionOfProducer) ?? { next: 0, lastFirst: -1 };
    this.broker.set(partitionOfProducer, state);
    if (first === state.lastFirst) return; // a duplicate: "success", nothing stored
    if (first !== state.next) {
      throw Object.assign(new Error('OUT_OF_ORDER_SEQUENCE_NUMBER'), {
        name: 'KafkaJSProtocolError',
        type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      });
    }
    store();
    state.lastFirst = first;
    state.next = first + count;
  }
}

const event = (aggregateId: string): OutboxEventRecord => pendingEvent(aggregateId);

describe('idempotent: true (a lost answer never makes the next batch a "duplicate")', () => {
  it('after a failed send, a next batch of the same size is stored, not answered as a duplicate', async () => {
    const cluster = new IdempotentCluster();
    const publisher = new KafkaPublisher({ brokers: ['x:1'], idempotent: true }, cluster);
    const first = [event('a'), event('b')];
    cluster.loseAnswers = 1;
    const lost = await publisher.publish(first);
    expect(lost.map((o) => o.status)).toEqual(['retriable', 'retriable']);
    // The relay's next batch: other aggregates' events, the same record count.
    const next = [event('c'), event('d')];
    const outcomes = await publisher.publish(next);
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 'ok') expect(cluster.log).toContain(next[i].eventId);
    }
    expect(cluster.log).toEqual(['evt-1', 'evt-2', 'evt-3', 'evt-4']);
  });

  it('sends one at a time, and replaces the producer after a failure before the next send starts', async () => {
    const cluster = new IdempotentCluster();
    const publisher = new KafkaPublisher({ brokers: ['x:1'], idempotent: true }, cluster);
    cluster.loseAnswers = 1;
    const calls = await Promise.all([
      publisher.publish([event('a'), event('b')]),
      publisher.publish([event('c'), event('d')]),
      publisher.publish([event('e'), event('f')]),
    ]);
    expect(cluster.maxInFlight).toBe(1);
    expect(cluster.replaced).toEqual([2]);
    // Every event reported published is in the log.
    const reported = calls.flat().filter((o) => o.status === 'ok').length;
    expect(cluster.log.length).toBeGreaterThanOrEqual(reported);
    expect(new Set(cluster.log).size).toBe(cluster.log.length);
  });

  it('without idempotent, sends are not serialized and the producer is kept', async () => {
    const cluster = new IdempotentCluster();
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, cluster);
    cluster.loseAnswers = 1;
    await Promise.all([publisher.publish([event('a')]), publisher.publish([event('b')])]);
    expect(cluster.maxInFlight).toBe(2);
    expect(cluster.replaced).toEqual([]);
  });
});
