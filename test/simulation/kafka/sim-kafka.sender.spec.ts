import { classifyKafkaError } from '../../../lib/publisher/kafka/kafka-error.classifier';
import type { PartitionedMessage, TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';
import { settle } from '../../contracts/support/sim-driver';
import type { Fault } from '../schedule/schedule.types';
import { simKafkaRig } from './sim-kafka.rig';
import { METADATA_MAX_AGE_MS } from './sim-kafka.sender';

/** Ambiguous acks on sim.Order partition 0 for the first 10 s: a call may fail after its append. */
const AMBIGUOUS: Fault = {
  kind: 'kafka-ambiguous-ack',
  at: 0,
  duration: 10_000,
  target: 0,
  param: 0,
};

function world(options: { idempotent?: boolean; faults?: Fault[]; seed?: number } = {}) {
  const { scheduler, history, cluster, sender } = simKafkaRig({
    topics: ['sim.Order'],
    faults: options.faults,
    seed: options.seed ?? 7,
    messageMaxBytes: 10_000,
    processName: 'relay-1',
    idempotent: options.idempotent,
  });
  const send = (batches: TopicBatch[]): Promise<'stored' | Error> =>
    settle(scheduler, sender.send(batches)).then(
      () => 'stored' as const,
      (error: unknown) => error as Error,
    );
  const stored = (): string[] => history.appends.map((append) => append.eventId);
  return { scheduler, history, cluster, sender, send, stored };
}

const order = (ids: string[], partition = 0): TopicBatch[] => [
  {
    topic: 'sim.Order',
    messages: ids.map((id): PartitionedMessage => ({
      key: id,
      value: 'v',
      headers: { ce_id: id },
      partition,
    })),
  },
];

/** Sends one-message batches until one fails after its append (the ambiguous ack), within 10 s. */
async function untilAmbiguousFailure(w: ReturnType<typeof world>): Promise<string> {
  for (let n = 0; n < 200; n++) {
    const id = `m${n}`;
    const outcome = await w.send(order([id]));
    if (outcome !== 'stored' && w.stored().includes(id)) return id;
  }
  throw new Error('no send failed after its append');
}

describe('SimKafkaSender', () => {
  describe('idempotent (issue 30)', () => {
    it('after a send that failed once the broker appended, a next batch of the same size is answered as its duplicate: resolved, not stored', async () => {
      const w = world({ idempotent: true, faults: [AMBIGUOUS] });
      const lost = await untilAmbiguousFailure(w);
      const before = w.stored().length;
      // Another event, the same record count, the rolled-back sequence: "success".
      let outcome: 'stored' | Error = new Error('not sent');
      while (outcome !== 'stored') outcome = await w.send(order(['other']));
      expect(w.stored()).toHaveLength(before);
      expect(w.stored()).not.toContain('other');
      expect(w.stored()).toContain(lost);
      expect(w.history.effects.get('kafka-duplicate-batch')).toBeGreaterThan(0);
    });

    it('after such a failure, a batch of another size is refused with OUT_OF_ORDER_SEQUENCE_NUMBER (producer state, not the event: the partition waits, no attempt counted)', async () => {
      const w = world({ idempotent: true, faults: [AMBIGUOUS] });
      await untilAmbiguousFailure(w);
      const outcome = await w.send(order(['x', 'y']));
      expect(classifyKafkaError(outcome)).toEqual({
        scope: 'partition',
        type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      });
      expect(w.stored()).not.toContain('x');
    });

    it('replaceProducer(): the next send has a new producer id, sequences from 0, and is stored', async () => {
      const w = world({ idempotent: true, faults: [AMBIGUOUS] });
      await untilAmbiguousFailure(w);
      await w.sender.replaceProducer();
      await w.scheduler.run({ until: 10_001 });
      expect(await w.send(order(['after']))).toBe('stored');
      expect(w.stored()).toContain('after');
    });

    it('the same request sent again by kafkajs’ retries is stored once', async () => {
      const w = world({ idempotent: true, faults: [AMBIGUOUS] });
      for (let n = 0; n < 40; n++) await w.send(order([`m${n}`]));
      const ids = w.stored();
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('without idempotence, kafkajs’ retries after an ambiguous ack store the batch again (duplicates)', async () => {
      const w = world({ faults: [AMBIGUOUS] });
      for (let n = 0; n < 40; n++) await w.send(order([`m${n}`]));
      const ids = w.stored();
      expect(new Set(ids).size).toBeLessThan(ids.length);
    });
  });

  describe('producer metadata that lags the cluster (issue 30, defect 5)', () => {
    it('refuses a message for a partition added after the producer read its metadata (UNKNOWN_TOPIC_OR_PARTITION), stores the others', async () => {
      const w = world();
      expect(await w.send(order(['a'], 1))).toBe('stored');
      w.cluster.addPartitions('sim.Order', 2);
      const outcome = await w.send([
        {
          topic: 'sim.Order',
          messages: [...order(['new'], 3)[0].messages, ...order(['old'], 0)[0].messages],
        },
      ]);
      expect(classifyKafkaError(outcome).type).toBe('UNKNOWN_TOPIC_OR_PARTITION');
      expect(w.stored()).toEqual(['a', 'old']);
      expect(w.history.contractViolations).toEqual([]);
    });

    it('knows the new partitions once its metadata is older than metadataMaxAge (300 s)', async () => {
      const w = world();
      await w.send(order(['a'], 1));
      w.cluster.addPartitions('sim.Order', 2);
      await w.scheduler.run({ until: w.scheduler.now + METADATA_MAX_AGE_MS - 1_000 });
      expect(await w.send(order(['early'], 3))).not.toBe('stored');
      await w.scheduler.run({ until: w.scheduler.now + 2_000 });
      expect(await w.send(order(['late'], 3))).toBe('stored');
    });

    it('a new producer (replaceProducer) reads the metadata afresh', async () => {
      const w = world();
      await w.send(order(['a'], 1));
      w.cluster.addPartitions('sim.Order', 1);
      await w.sender.replaceProducer();
      expect(await w.send(order(['b'], 2))).toBe('stored');
    });
  });
});
