import { SimRandom } from '../core/sim.random';
import { SimScheduler } from '../core/sim.scheduler';
import { SimTrace } from '../core/sim.trace';
import { ActiveFaults } from '../schedule/active-faults';
import type { Fault } from '../schedule/schedule.types';
import { SimHistory } from '../world/sim.history';
import { classifyKafkaError } from '../../../lib/publisher/kafka/kafka-error.classifier';
import { SimKafkaCluster } from './sim-kafka.cluster';
import type { PartitionedMessage } from '../../../lib/publisher/kafka/kafka.sender';

function cluster(
  faults: Fault[] = [],
  limits = { messageMaxBytes: 1_000, requestMaxBytes: 5_000 },
) {
  const history = new SimHistory();
  const kafka = new SimKafkaCluster(
    new SimScheduler(new SimTrace()),
    history,
    new ActiveFaults(faults),
    new SimRandom(3),
    limits,
    [
      { name: 'sim.Order', typeIndex: 0, partitions: 2 },
      { name: 'sim.Invoice', typeIndex: 1, partitions: 1 },
    ],
  );
  return { kafka, history };
}

function message(id: string, partition: number, valueBytes = 10): PartitionedMessage {
  return { key: id, value: 'x'.repeat(valueBytes), headers: { ce_id: id }, partition };
}

const window = (kind: Fault['kind'], target: number, param = 0): Fault => ({
  kind,
  at: 0,
  duration: 1_000,
  target,
  param,
});

describe('SimKafkaCluster', () => {
  it('appends each partition group on its own: a refusing partition does not undo the others', () => {
    const { kafka, history } = cluster([window('kafka-partition-retriable', 0, 1)]);
    const attempt = kafka.produce('relay-1', 1, [
      { topic: 'sim.Order', messages: [message('a', 0), message('b', 1)] },
      { topic: 'sim.Invoice', messages: [message('c', 0)] },
    ]);
    expect(history.appends.map((append) => append.eventId)).toEqual(['a', 'c']);
    expect(attempt.retriable).toBe(true);
    expect(classifyKafkaError(attempt.error).scope).toBe('partition');
  });

  it('refuses a topic that is missing or unauthorized, whole, for the time of the fault', () => {
    const missing = cluster([window('kafka-topic-missing', 1)]);
    const refused = missing.kafka.produce('relay-1', 1, [
      { topic: 'sim.Invoice', messages: [message('c', 0)] },
    ]);
    expect(classifyKafkaError(refused.error).type).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(missing.history.appends).toEqual([]);
    const unauthorized = cluster([window('kafka-topic-unauthorized', 0)]);
    const denied = unauthorized.kafka.produce('relay-1', 1, [
      { topic: 'sim.Order', messages: [message('a', 0)] },
    ]);
    expect(denied).toMatchObject({ retriable: false });
    expect(classifyKafkaError(denied.error).type).toBe('TOPIC_AUTHORIZATION_FAILED');
  });

  it('rejects a message over the limit for good, and a record batch over it as a size error', () => {
    const { kafka, history } = cluster();
    const single = kafka.produce('relay-1', 1, [
      { topic: 'sim.Order', messages: [message('big', 0, 2_000)] },
    ]);
    expect(classifyKafkaError(single.error)).toMatchObject({
      type: 'MESSAGE_TOO_LARGE',
      scope: 'size',
    });
    const batch = kafka.produce('relay-1', 2, [
      {
        topic: 'sim.Order',
        messages: Array.from({ length: 5 }, (_, i) => message(`m${i}`, 0, 300)),
      },
    ]);
    expect(classifyKafkaError(batch.error).scope).toBe('size');
    expect(history.appends).toEqual([]);
  });

  it('closes the connection for a request over the request limit, and refuses everything in an outage', () => {
    const { kafka } = cluster([], { messageMaxBytes: 10_000, requestMaxBytes: 500 });
    const tooLarge = kafka.produce('relay-1', 1, [
      { topic: 'sim.Order', messages: [message('a', 0, 300), message('b', 1, 300)] },
    ]);
    expect(classifyKafkaError(tooLarge.error).scope).toBe('broker');
    const down = cluster([window('broker-outage', 0)]);
    expect(
      classifyKafkaError(
        down.kafka.produce('relay-1', 1, [{ topic: 'sim.Order', messages: [message('a', 0)] }])
          .error,
      ).scope,
    ).toBe('broker');
  });

  it('appends, then reports REQUEST_TIMED_OUT, on an ambiguous ack (flagged in the history)', () => {
    const { kafka, history } = cluster([
      { ...window('kafka-ambiguous-ack', 0, 0), duration: 1_000 },
    ]);
    let ambiguous = 0;
    for (let call = 1; call <= 20; call++) {
      const attempt = kafka.produce('relay-1', call, [
        { topic: 'sim.Order', messages: [message(`a${call}`, 0)] },
      ]);
      if (attempt.error) {
        ambiguous++;
        expect(classifyKafkaError(attempt.error).type).toBe('REQUEST_TIMED_OUT');
        // Appended, yet the relay is told this partition failed: the memory invariant takes it as refused.
        expect(attempt.failed).toEqual({ topic: 'sim.Order', partition: 0 });
      }
    }
    expect(ambiguous).toBeGreaterThan(0);
    expect(history.appends.filter((append) => append.ambiguous)).toHaveLength(ambiguous);
    expect(history.appends).toHaveLength(20);
  });

  describe('idempotent producers (issue 30)', () => {
    const order = (ids: string[], partition = 0) => [
      { topic: 'sim.Order', messages: ids.map((id) => message(id, partition)) },
    ];

    it('moves a producer’s sequences on per partition by the records each request appended', () => {
      const { kafka, history } = cluster();
      const producer = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      expect(kafka.produce('relay-1', 1, order(['a', 'b']), producer).error).toBeUndefined();
      expect(kafka.produce('relay-1', 2, order(['c']), producer).error).toBeUndefined();
      expect(producer.sequences.get('sim.Order#0')).toBe(3);
      expect(history.appends.map((append) => append.eventId)).toEqual(['a', 'b', 'c']);
    });

    it('answers a batch equal to an appended one (same first sequence and count) as a duplicate: success, nothing appended', () => {
      const { kafka, history } = cluster();
      const producer = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      kafka.produce('relay-1', 1, order(['a', 'b']), producer);
      // The client's sequence went back (a failed request), the broker had appended it.
      producer.sequences.set('sim.Order#0', 0);
      const again = kafka.produce('relay-1', 2, order(['x', 'y']), producer);
      expect(again.error).toBeUndefined();
      expect(history.appends.map((append) => append.eventId)).toEqual(['a', 'b']);
      expect(history.effects.get('kafka-duplicate-batch')).toBe(1);
    });

    it('refuses a batch whose first sequence is not the next one (OUT_OF_ORDER_SEQUENCE_NUMBER, not retriable), and moves no sequence', () => {
      const { kafka, history } = cluster();
      const producer = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      kafka.produce('relay-1', 1, order(['a', 'b']), producer);
      producer.sequences.set('sim.Order#0', 0);
      const refused = kafka.produce('relay-1', 2, order(['x']), producer);
      expect(refused).toMatchObject({ retriable: false });
      expect(classifyKafkaError(refused.error).type).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
      expect(producer.sequences.get('sim.Order#0')).toBe(0);
      expect(history.appends).toHaveLength(2);
    });

    it('leaves every partition’s sequence where it was when one partition of the request fails, though the others appended', () => {
      const { kafka, history } = cluster([window('kafka-partition-retriable', 0, 1)]);
      const producer = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      const attempt = kafka.produce(
        'relay-1',
        1,
        [{ topic: 'sim.Order', messages: [message('a', 0), message('b', 1)] }],
        producer,
      );
      expect(attempt.error).toBeDefined();
      expect(history.appends.map((append) => append.eventId)).toEqual(['a']);
      expect(producer.sequences.size).toBe(0);
      // kafkajs' retry of the same request: partition 0 is a duplicate, nothing appended twice.
      kafka.produce('relay-1', 2, order(['a']), producer);
      expect(history.appends.map((append) => append.eventId)).toEqual(['a']);
    });

    it('gives a new producer a new id whose sequences start at 0', () => {
      const { kafka, history } = cluster();
      const first = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      kafka.produce('relay-1', 1, order(['a']), first);
      const second = { id: kafka.initProducerId(), sequences: new Map<string, number>() };
      expect(second.id).not.toBe(first.id);
      expect(kafka.produce('relay-1', 2, order(['b']), second).error).toBeUndefined();
      expect(history.appends.map((append) => append.eventId)).toEqual(['a', 'b']);
    });
  });

  it('adds partitions to a topic: metadata and appends see them at once, the history records it', () => {
    const { kafka, history } = cluster();
    kafka.addPartitions('sim.Order', 2);
    expect(kafka.metadata('sim.Order')).toEqual({ partitions: 4 });
    expect(kafka.partitionsOf('sim.Order')).toBe(4);
    expect(
      kafka.produce('relay-1', 1, [{ topic: 'sim.Order', messages: [message('a', 3)] }]).error,
    ).toBeUndefined();
    expect(history.contractViolations).toEqual([]);
    expect(history.partitionsAdded).toEqual([{ at: 0, topic: 'sim.Order', partitions: 4 }]);
  });
});
