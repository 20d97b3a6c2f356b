import { classifyKafkaError } from '../kafka/kafka-error.classifier';
import { SendAbortedError } from '../kafka/kafka.sender';
import type { PlatformaticKafka } from './platformatic-kafka.loader';
import { PlatformaticKafkaSender } from './platformatic-kafka.sender';

/** A stand-in for @platformatic/kafka's Producer that records what the sender asks of it. */
class FakeProducer {
  static last: FakeProducer;
  readonly sends: Record<string, unknown>[] = [];
  sendError?: unknown;

  constructor(readonly options: Record<string, unknown>) {
    FakeProducer.last = this;
  }

  metadata(): Promise<unknown> {
    return Promise.resolve({ topics: new Map([['orders', { partitionsCount: 2 }]]) });
  }

  send(options: Record<string, unknown>): Promise<unknown> {
    this.sends.push(options);
    return this.sendError ? Promise.reject(this.sendError) : Promise.resolve({ offsets: [] });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

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
});
