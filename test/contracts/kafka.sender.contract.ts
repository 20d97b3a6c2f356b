import { classifyKafkaError } from '../../lib/publisher/kafka/kafka-error.classifier';
import { SendAbortedError } from '../../lib/publisher/kafka/kafka.sender';
import type { KafkaSender, PartitionedMessage } from '../../lib/publisher/kafka/kafka.sender';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/** The largest message the fixture's topic accepts (its `max.message.bytes`). */
export const CONTRACT_MESSAGE_MAX_BYTES = 2_000;

/** One implementation of `KafkaSender` and a broker with one fresh topic of two partitions. */
export interface KafkaSenderFixture {
  sender: KafkaSender;
  /** Two partitions, `max.message.bytes` = `CONTRACT_MESSAGE_MAX_BYTES`, empty. */
  topic: string;
  /** A topic the cluster does not know. */
  missingTopic: string;
  /** What `topic` stored: each partition's `ce_id` headers in offset order. */
  stored(topic: string): Promise<Record<number, string[]>>;
  /** A topic whose `partition` refuses to store for now (retriable, e.g. NOT_ENOUGH_REPLICAS). */
  refusing?: { topic: string; partition: number };
  /** A topic this client is not authorized to write to. */
  unauthorizedTopic?: string;
  /** Makes the broker unreachable. */
  brokerDown?(): Promise<void>;
  /** Another sender of the same client, whose only broker address nobody listens on. */
  unreachable?(): Promise<KafkaSender>;
  close(): Promise<void>;
}

export const KAFKA_SENDER_CASES = {
  partitionCount: 'partitionCount gives the topic’s partition count from the cluster metadata',
  countUnknown:
    'partitionCount of an unknown topic rejects, classified topic (UNKNOWN_TOPIC_OR_PARTITION)',
  stores:
    'send resolves once every message is stored, each on its partition, in order, with its headers',
  unknownTopic:
    'send to an unknown topic rejects, classified topic (UNKNOWN_TOPIC_OR_PARTITION), and stores nothing',
  oversize:
    'a message over the topic’s max.message.bytes rejects, classified size (MESSAGE_TOO_LARGE), and is not stored',
  aborted: 'send with an aborted signal rejects with SendAbortedError and stores nothing',
  partitionRefused:
    'a partition that refuses for now rejects (after the client’s retries), classified partition; the other partition keeps its messages',
  unauthorized:
    'a topic the client may not write to rejects, classified topic (TOPIC_AUTHORIZATION_FAILED), and stores nothing',
  brokerDown: 'an unreachable broker rejects, classified broker',
  missingPartition:
    'a message for a partition the topic does not have is never reported as stored (send rejects)',
  unreachable:
    'a sender whose brokers do not answer rejects connect, partitionCount and send, each classified broker',
  replaced:
    'after replaceProducer, sends store as before, each on its partition, in order (a new producer took over)',
} as const;

export type KafkaSenderCase = keyof typeof KAFKA_SENDER_CASES;

const message = (id: string, partition?: number, valueBytes = 10): PartitionedMessage => ({
  key: `key-${id}`,
  value: 'x'.repeat(valueBytes),
  headers: { ce_id: id, ce_type: 'Created' },
  partition,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to reject, it resolved');
    },
    (error: unknown) => error,
  );
}

/** The contract of `KafkaSender` (lib/publisher/kafka/kafka.sender.ts). */
export function kafkaSenderContract(
  fixture: () => Promise<KafkaSenderFixture>,
  skips: ContractSkips<KafkaSenderCase> = {},
): void {
  const test = contractCases(KAFKA_SENDER_CASES, skips);
  let f: KafkaSenderFixture;
  beforeEach(async () => {
    f = await fixture();
    await f.sender.connect();
  });
  afterEach(async () => {
    await f.sender.disconnect();
    await f.close();
  });

  test('partitionCount', async () => {
    expect(await f.sender.partitionCount(f.topic)).toBe(2);
  });

  test('countUnknown', async () => {
    const error = await rejection(f.sender.partitionCount(f.missingTopic));
    expect(classifyKafkaError(error)).toEqual({
      scope: 'topic',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  test('stores', async () => {
    await f.sender.send([
      { topic: f.topic, messages: [message('a', 0), message('c', 1), message('b', 0)] },
    ]);
    await f.sender.send([{ topic: f.topic, messages: [message('d', 0)] }]);
    expect(await f.stored(f.topic)).toEqual({ 0: ['a', 'b', 'd'], 1: ['c'] });
  });

  test('unknownTopic', async () => {
    const error = await rejection(
      f.sender.send([{ topic: f.missingTopic, messages: [message('u', 0)] }]),
    );
    expect(classifyKafkaError(error)).toEqual({
      scope: 'topic',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  test('oversize', async () => {
    const error = await rejection(
      f.sender.send([
        { topic: f.topic, messages: [message('big', 0, CONTRACT_MESSAGE_MAX_BYTES * 2)] },
      ]),
    );
    expect(classifyKafkaError(error)).toEqual({ scope: 'size', type: 'MESSAGE_TOO_LARGE' });
    await f.sender.send([{ topic: f.topic, messages: [message('small', 0)] }]);
    expect(await f.stored(f.topic)).toEqual({ 0: ['small'] });
  });

  test('aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(
      f.sender.send([{ topic: f.topic, messages: [message('n', 0)] }], controller.signal),
    );
    expect(error).toBeInstanceOf(SendAbortedError);
    await f.sender.send([{ topic: f.topic, messages: [message('after', 1)] }]);
    expect(await f.stored(f.topic)).toEqual({ 1: ['after'] });
  });

  test('partitionRefused', async () => {
    const { topic, partition } = f.refusing!;
    const other = 1 - partition;
    const error = await rejection(
      f.sender.send([{ topic, messages: [message('r', partition), message('ok', other)] }]),
    );
    expect(classifyKafkaError(error).scope).toBe('partition');
    const stored = await f.stored(topic);
    expect(stored[other]).toContain('ok');
    expect(stored[partition]).toBeUndefined();
  });

  test('unauthorized', async () => {
    const topic = f.unauthorizedTopic!;
    const error = await rejection(f.sender.send([{ topic, messages: [message('no', 0)] }]));
    expect(classifyKafkaError(error)).toEqual({
      scope: 'topic',
      type: 'TOPIC_AUTHORIZATION_FAILED',
    });
    expect(await f.stored(topic)).toEqual({});
  });

  test('brokerDown', async () => {
    await f.brokerDown!();
    const error = await rejection(f.sender.send([{ topic: f.topic, messages: [message('z', 0)] }]));
    expect(classifyKafkaError(error).scope).toBe('broker');
  });

  test('missingPartition', async () => {
    const outcome = await f.sender
      .send([{ topic: f.topic, messages: [message('nowhere', 5)] }])
      .then(
        () => 'resolved',
        () => 'rejected',
      );
    expect(outcome).toBe('rejected');
    expect(await f.stored(f.topic)).toEqual({});
  });

  test('replaced', async () => {
    await f.sender.send([{ topic: f.topic, messages: [message('p', 0)] }]);
    await f.sender.replaceProducer();
    await f.sender.send([{ topic: f.topic, messages: [message('q', 0), message('r', 1)] }]);
    await f.sender.replaceProducer();
    await f.sender.send([{ topic: f.topic, messages: [message('s', 0)] }]);
    expect(await f.stored(f.topic)).toEqual({ 0: ['p', 'q', 's'], 1: ['r'] });
  });

  test('unreachable', async () => {
    const sender = await f.unreachable!();
    try {
      expect(classifyKafkaError(await rejection(sender.connect())).scope).toBe('broker');
      expect(classifyKafkaError(await rejection(sender.partitionCount(f.topic))).scope).toBe(
        'broker',
      );
      const error = await rejection(sender.send([{ topic: f.topic, messages: [message('x', 0)] }]));
      expect(classifyKafkaError(error).scope).toBe('broker');
    } finally {
      await sender.disconnect();
    }
    expect(await f.stored(f.topic)).toEqual({});
  });
}
