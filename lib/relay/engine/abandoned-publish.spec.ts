import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { KafkaPublisher } from '../../publisher/kafka/kafka.publisher';
import type { KafkaSender, TopicBatch } from '../../publisher/kafka/kafka.sender';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { RelayEngine } from './relay.engine';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };
const notLeader = () =>
  Object.assign(new Error('retries exceeded'), {
    name: 'KafkaJSNumberOfRetriesExceeded',
    originalError: Object.assign(new Error('NOT_LEADER_OR_FOLLOWER'), {
      name: 'KafkaJSProtocolError',
      type: 'NOT_LEADER_OR_FOLLOWER',
    }),
  });

/** The first send hangs until `failFirst()`; every send is recorded (the signal is the publisher's to check). */
class SlowSender implements KafkaSender {
  readonly sends: TopicBatch[][] = [];
  private rejectFirst?: (error: Error) => void;
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(): Promise<number> {
    return 8;
  }
  send(batches: readonly TopicBatch[]): Promise<void> {
    this.sends.push([...batches]);
    if (this.sends.length > 1) return Promise.resolve();
    return new Promise((_, reject) => (this.rejectFirst = reject));
  }
  failFirst(): void {
    this.rejectFirst?.(notLeader());
  }
}

function setup(leaseValid: () => boolean) {
  const store = new InMemoryRelayStore();
  const sender = new SlowSender();
  const publisher = new KafkaPublisher({ brokers: ['127.0.0.1:9092'] }, sender);
  const engine = new RelayEngine(
    {
      batchSize: 10,
      maxBatchBytes: 1_000_000,
      maxInFlight: 100,
      maxInFlightBytes: 100_000_000,
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 40, jitter: 0 },
      publishConcurrency: 1,
    },
    {
      outbox: store,
      writes: new FencedWrites(store, 1, leaseValid),
      publisher,
      clock: systemClock,
      now: Date.now,
      canPublish: leaseValid,
      leaseValid,
      random: () => 0.5,
      logger: silent,
      holdsLogger: silent,
      metrics: new OutboxRelayMetrics(),
    },
  );
  const offer = async (events: OutboxEventRecord[]) => {
    const reservation = await engine.budget.reserve(events.length);
    engine.offer(
      events.map((event) => ({ event, settle: () => undefined })),
      reservation,
    );
  };
  return { store, sender, engine, offer };
}

const until = async (condition: () => boolean): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > 3000) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('a publish abandoned when its term ends', () => {
  it('sends nothing more after the stop timeout gave up on it (no fallback send per partition)', async () => {
    // Defect: the publisher went on with its per-partition fallback sends after the term ended,
    // while a new owner may already publish these aggregates (an order violation).
    const { store, sender, engine, offer } = setup(() => true);
    const events = Array.from({ length: 8 }, (_, i) => store.insert({ aggregateId: `a${i}` }));
    await offer(events);
    await until(() => sender.sends.length === 1);
    expect(await engine.close(10)).toBe(false);
    sender.failFirst();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(sender.sends).toHaveLength(1);
    expect(store.pending()).toHaveLength(8);
  });

  it('is abandoned at once when the lease is no longer valid', async () => {
    let valid = true;
    const { store, sender, engine, offer } = setup(() => valid);
    const events = Array.from({ length: 8 }, (_, i) => store.insert({ aggregateId: `a${i}` }));
    await offer(events);
    await until(() => sender.sends.length === 1);
    valid = false;
    const closing = engine.close(60_000);
    sender.failFirst();
    expect(await closing).toBe(true);
    expect(sender.sends).toHaveLength(1);
  });
});
