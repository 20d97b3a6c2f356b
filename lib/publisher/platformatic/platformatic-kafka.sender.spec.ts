import { classifyKafkaError } from '../kafka/kafka-error.classifier';
import { SendAbortedError } from '../kafka/kafka.sender';
import type { PlatformaticKafka } from './platformatic-kafka.loader';
import { PlatformaticKafkaSender } from './platformatic-kafka.sender';

/**
 * A stand-in for @platformatic/kafka's Producer that records what the sender asks of it. Its
 * metadata is cached (`metadataMaxAge`): the cluster's partition counts are read on the first
 * request for a topic and on `forceUpdate`; `autocreateTopics` creates an unknown topic (3).
 */
class FakeProducer {
  static last: FakeProducer;
  static all: FakeProducer[] = [];
  static readonly cluster = new Map<string, number>();
  static hang = false;
  readonly sends: Record<string, unknown>[] = [];
  readonly metadataRequests: Record<string, unknown>[] = [];
  private readonly cached = new Map<string, number>();
  sendError?: unknown;
  closed = false;

  constructor(readonly options: Record<string, unknown>) {
    FakeProducer.last = this;
    FakeProducer.all.push(this);
  }

  metadata(options: { topics: string[]; forceUpdate?: boolean; autocreateTopics?: boolean }) {
    this.metadataRequests.push(options);
    const topics = new Map<string, { partitionsCount: number }>();
    for (const topic of options.topics) {
      if (!FakeProducer.cluster.has(topic) && options.autocreateTopics)
        FakeProducer.cluster.set(topic, 3);
      if (options.forceUpdate || !this.cached.has(topic))
        this.cached.set(topic, FakeProducer.cluster.get(topic) ?? 0);
      topics.set(topic, { partitionsCount: this.cached.get(topic)! });
    }
    return Promise.resolve({ topics });
  }

  send(options: Record<string, unknown>): Promise<unknown> {
    this.sends.push(options);
    if (FakeProducer.hang) return new Promise(() => {});
    return this.sendError ? Promise.reject(this.sendError) : Promise.resolve({ offsets: [] });
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

beforeEach(() => {
  FakeProducer.cluster.clear();
  FakeProducer.cluster.set('orders', 2);
  FakeProducer.all = [];
  FakeProducer.hang = false;
});

const fakeModule = {
  Producer: FakeProducer,
  stringSerializers: {},
} as unknown as PlatformaticKafka;
const batch = (partition: number) => [
  { topic: 'orders', messages: [{ key: 'k', value: 'v', headers: { ce_id: '1' }, partition }] },
];

describe('PlatformaticKafkaSender (against a recording producer)', () => {
  it('asks acks -1 on every send (the client ignores the producer-level acks: 1.35 sends acks 1)', async () => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    await sender.send(batch(0));
    await sender.send(batch(1));
    expect(FakeProducer.last.sends.map((send) => send.acks)).toEqual([-1, -1]);
  });

  it('idempotent: an idempotent producer; compression and retries mapped from the kafkajs-style options', async () => {
    const sender = new PlatformaticKafkaSender(
      {
        brokers: ['127.0.0.1:9092'],
        idempotent: true,
        compression: 'gzip',
        retry: { retries: 5, initialRetryTime: 300 },
      },
      fakeModule,
    );
    await sender.connect();
    expect(FakeProducer.last.options).toMatchObject({
      bootstrapBrokers: ['127.0.0.1:9092'],
      idempotent: true,
      compression: 'gzip',
      retries: 5,
      autocreateTopics: false,
    });
    // kafkajs' schedule: the first retry after initialRetryTime, randomized by +-factor (0.2).
    const retryDelay = FakeProducer.last.options.retryDelay as (...args: unknown[]) => number;
    expect(retryDelay(FakeProducer.last, 'send', 1, 5, new Error())).toBeGreaterThanOrEqual(240);
    expect(retryDelay(FakeProducer.last, 'send', 1, 5, new Error())).toBeLessThanOrEqual(360);
  });

  it('an aborted signal: SendAbortedError, nothing asked of the producer', async () => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    await sender.connect();
    const controller = new AbortController();
    controller.abort();
    await expect(sender.send(batch(0), controller.signal)).rejects.toBeInstanceOf(SendAbortedError);
    expect(FakeProducer.last.sends).toEqual([]);
  });

  it.each([
    [{ code: 'PLT_KFK_NETWORK', canRetry: true }, 'broker', undefined],
    [{ code: 'PLT_KFK_TIMEOUT', canRetry: true }, 'broker', undefined],
    [
      { code: 'PLT_KFK_PROTOCOL', apiId: 'NOT_ENOUGH_REPLICAS', canRetry: true },
      'partition',
      'NOT_ENOUGH_REPLICAS',
    ],
    [
      { code: 'PLT_KFK_PROTOCOL', apiId: 'TOPIC_AUTHORIZATION_FAILED' },
      'topic',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
    [{ code: 'PLT_KFK_PROTOCOL', apiId: 'RECORD_LIST_TOO_LARGE' }, 'size', 'RECORD_LIST_TOO_LARGE'],
  ])('the client error %o is classified %s (%s)', async (fields, scope, type) => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    await sender.connect();
    // Per-partition errors come as an aggregate (PLT_KFK_RESPONSE) whose errors carry the codes.
    const inner = Object.assign(new Error('inner'), fields);
    FakeProducer.last.sendError = Object.assign(
      new AggregateError([inner], 'Producing messages failed.'),
      {
        code: 'PLT_KFK_MULTIPLE',
      },
    );
    const error = await sender.send(batch(0)).catch((caught: unknown) => caught);
    expect(classifyKafkaError(error)).toEqual({ scope, type });
  });

  it('a send the client never settles (idempotent: retries for ever) rejects with KafkaSendTimeoutError at sendTimeout', async () => {
    const sender = new PlatformaticKafkaSender(
      { brokers: ['127.0.0.1:9092'], idempotent: true, sendTimeout: 50 },
      fakeModule,
    );
    await sender.connect();
    FakeProducer.hang = true;
    const outcome = await Promise.race([
      sender.send(batch(0)).catch((error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve('still pending after 1 s'), 1000)),
    ]);
    expect(outcome).toMatchObject({ name: 'OutboxKafkaSendTimeout', timeoutMs: 50 });
  });

  it('after the topic gained partitions, a send to a new partition goes out (its metadata is read again)', async () => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    await sender.send(batch(1));
    FakeProducer.cluster.set('orders', 4);
    await sender.send(batch(3));
    expect(FakeProducer.last.sends).toHaveLength(2);
  });

  it('a partition the producer does not know holds only that partition: OutboxPartitionNotInMetadata, nothing sent', async () => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    const error = await sender.send(batch(7)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'OutboxPartitionNotInMetadata',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      partition: 7,
    });
    expect(FakeProducer.last.sends).toEqual([]);
  });

  it('partitionCount with autoCreate asks the broker to create the topic', async () => {
    const sender = new PlatformaticKafkaSender(
      { brokers: ['127.0.0.1:9092'], allowAutoTopicCreation: true },
      fakeModule,
    );
    await expect(sender.partitionCount('fresh')).rejects.toMatchObject({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
    expect(await sender.partitionCount('fresh', { autoCreate: true })).toBe(3);
  });

  it('replaceProducer: the next send uses a new producer; the old one is closed', async () => {
    const sender = new PlatformaticKafkaSender({ brokers: ['127.0.0.1:9092'] }, fakeModule);
    await sender.send(batch(0));
    await sender.replaceProducer();
    await sender.send(batch(1));
    expect(FakeProducer.all).toHaveLength(2);
    expect(FakeProducer.all[0].closed).toBe(true);
    expect(FakeProducer.all[1].sends).toHaveLength(1);
    await sender.disconnect();
    expect(FakeProducer.all[1].closed).toBe(true);
  });
});
