import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveRelayOptions } from './relay.options';

const kafka = { brokers: ['127.0.0.1:9092'] };
const restart = async (): Promise<boolean> => true;

describe('resolveRelayOptions', () => {
  it('fills documented defaults', () => {
    const resolved = resolveRelayOptions({ kafka });
    expect(resolved).toMatchObject({
      autoStart: true,
      topicPrefix: '',
      allowAutoTopicCreation: false,
      batchSize: 500,
      maxInFlight: 5000,
      maxAttempts: 10,
      backoff: { initialMs: 500, maxMs: 60_000, jitter: 0.2 },
      sweepIntervalMs: 10_000,
      sweepGraceMs: 30_000,
      checkpointEvery: { events: 1000, ms: 1000 },
      lease: { enabled: true, durationMs: 15_000, renewMs: 5_000 },
      retentionSeconds: 604_800,
      name: 'default',
      partitions: 1,
    });
  });

  it.each([
    [{}, 'relay.kafka'],
    [undefined, 'relay.kafka'],
    [{ kafka: { brokers: [] } }, 'relay.kafka.brokers'],
    [{ kafka: { brokers: ['localhost'] } }, 'relay.kafka.brokers'],
    [{ kafka: { ...kafka, idempotent: 'yes' } }, 'relay.kafka.idempotent'],
    [{ kafka: { ...kafka, bogus: 1 } }, 'relay.kafka.bogus'],
    [{ kafka, batchSize: 0 }, 'relay.batchSize'],
    [{ kafka, batchSize: 100, maxInFlight: 50 }, 'relay.maxInFlight'],
    [{ kafka, maxAttempts: 1.5 }, 'relay.maxAttempts'],
    [{ kafka, backoff: { jitter: 2 } }, 'relay.backoff.jitter'],
    [{ kafka, backoff: { initialMs: 1000, maxMs: 10 } }, 'relay.backoff.maxMs'],
    [{ kafka, lease: { durationMs: 1000, renewMs: 800 } }, 'relay.lease.renewMs'],
    [{ kafka, topicPrefix: 'bad prefix' }, 'relay.topicPrefix'],
    [{ kafka, topic: 'orders' }, 'relay.topic'],
    [{ kafka, name: 'a/b' }, 'relay.name'],
    [{ kafka, unknownThing: true }, 'relay.unknownThing'],
    [{ kafka, partitions: 0 }, 'relay.partitions'],
    [{ kafka, partitions: 2.5 }, 'relay.partitions'],
    [{ kafka, partitions: 257 }, 'relay.partitions'],
    [{ kafka, partitions: 4, lease: { enabled: false } }, 'relay.partitions'],
    [{ kafka, partitions: 16 }, 'relay.maxInFlight'],
    [{ kafka, partitions: 4, maxInFlightBytes: 2_000_000 }, 'relay.maxInFlightBytes'],
    [{ publisher: { publish: () => [] } }, 'relay.publisher'],
    [{ kafka: { ...kafka, retry: { retries: -1 } } }, 'relay.kafka.retry.retries'],
    [{ kafka: { ...kafka, retry: { retries: 1.5 } } }, 'relay.kafka.retry.retries'],
    [{ kafka: { ...kafka, retry: { retrys: 3 } } }, 'relay.kafka.retry.retrys'],
    [
      { kafka: { ...kafka, retry: { initialRetryTime: -5 } } },
      'relay.kafka.retry.initialRetryTime',
    ],
    [
      { kafka: { ...kafka, retry: { initialRetryTime: 500, maxRetryTime: 100 } } },
      'relay.kafka.retry.maxRetryTime',
    ],
    [{ kafka: { ...kafka, retry: { factor: 2 } } }, 'relay.kafka.retry.factor'],
    [{ kafka: { ...kafka, retry: { multiplier: 0.5 } } }, 'relay.kafka.retry.multiplier'],
    [{ kafka: { ...kafka, sendTimeout: 0 } }, 'relay.kafka.sendTimeout'],
    [{ kafka: { ...kafka, sendTimeout: 1.5 } }, 'relay.kafka.sendTimeout'],
    [{ kafka: { ...kafka, sendTimeout: 5000, requestTimeout: 10_000 } }, 'relay.kafka.sendTimeout'],
    [{ kafka: { ...kafka, requestTimeout: 150_000 } }, 'relay.kafka.sendTimeout'],
    [{ kafka: { ...kafka, ssl: 'yes' } }, 'relay.kafka.ssl'],
    [{ kafka: { ...kafka, sasl: 'plain' } }, 'relay.kafka.sasl'],
    [{ kafka: { ...kafka, sasl: { mechanism: 'kerberos' } } }, 'relay.kafka.sasl.mechanism'],
    [
      { kafka: { ...kafka, sasl: { mechanism: 'plain', username: 'u' } } },
      'relay.kafka.sasl.password',
    ],
    [
      { kafka: { ...kafka, sasl: { mechanism: 'oauthbearer' } } },
      'relay.kafka.sasl.oauthBearerProvider',
    ],
  ])('rejects %j naming %s', (raw, option) => {
    try {
      resolveRelayOptions(raw as never);
      throw new Error('expected a rejection');
    } catch (error) {
      expect(error).toBeInstanceOf(OutboxOptionsError);
      expect((error as OutboxOptionsError).option).toBe(option);
    }
  });

  it('accepts partitions whose batches fit in maxInFlight', () => {
    expect(resolveRelayOptions({ kafka, partitions: 10 }).partitions).toBe(10);
  });

  it('accepts a custom publisher instead of kafka', () => {
    const publisher = {
      connect: async () => undefined,
      publish: async () => [],
      disconnect: async () => undefined,
    };
    expect(resolveRelayOptions({ publisher }).publisher).toBe(publisher);
  });

  it('accepts a full retry, a sendTimeout at least requestTimeout, and sasl with its credentials', () => {
    const resolved = resolveRelayOptions({
      kafka: {
        ...kafka,
        requestTimeout: 20_000,
        sendTimeout: 20_000,
        retry: { retries: 0, initialRetryTime: 0, maxRetryTime: 0, factor: 0, multiplier: 1 },
        sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
        ssl: true,
      },
    });
    expect(resolved.kafka).toMatchObject({ sendTimeout: 20_000, retry: { retries: 0 } });
  });
});

describe('relay.kafka: what a client cannot honour is refused at bootstrap, naming the option and the client', () => {
  function refusal(raw: unknown): OutboxOptionsError {
    try {
      resolveRelayOptions({ kafka: raw } as never);
    } catch (error) {
      if (error instanceof OutboxOptionsError) return error;
      throw error;
    }
    throw new Error('expected a refusal');
  }

  it.each([
    // kafkajs throws KafkaJSNonRetriableError when the producer is made: an endless "broker unavailable".
    [{ idempotent: true, retry: { retries: 0 } }, 'kafkajs', 'relay.kafka.retry.retries'],
    // platformatic raises 0 or 1 to Number.MAX_SAFE_INTEGER for an idempotent producer: a send never settles.
    [
      { idempotent: true, retry: { retries: 0 }, client: 'platformatic' },
      'platformatic',
      'relay.kafka.retry.retries',
    ],
    [
      { idempotent: true, retry: { retries: 1 }, client: 'platformatic' },
      'platformatic',
      'relay.kafka.retry.retries',
    ],
    [
      {
        client: 'platformatic',
        sasl: {
          mechanism: 'aws',
          authorizationIdentity: 'a',
          accessKeyId: 'k',
          secretAccessKey: 's',
        },
      },
      'platformatic',
      'relay.kafka.sasl',
    ],
    [
      {
        client: 'platformatic',
        sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: 't' }) },
      },
      'platformatic',
      'relay.kafka.sasl',
    ],
    [{ client: 'platformatic', clientId: 'my relay' }, 'platformatic', 'relay.kafka.clientId'],
    [{ retry: { restartOnFailure: restart } }, 'kafkajs', 'relay.kafka.retry.restartOnFailure'],
    [
      { client: 'platformatic', retry: { restartOnFailure: restart } },
      'platformatic',
      'relay.kafka.retry.restartOnFailure',
    ],
  ])('%j: refused for %s, naming %s', (given, client, option) => {
    const error = refusal({ ...kafka, ...given });
    expect(error.option).toBe(option);
    expect(error.message).toContain(`relay.kafka.client "${client}"`);
  });

  it('accepts what the client honours: idempotent with 1 retry on kafkajs, 2 on platformatic; a spaced client id on kafkajs', () => {
    expect(() =>
      resolveRelayOptions({ kafka: { ...kafka, idempotent: true, retry: { retries: 1 } } }),
    ).not.toThrow();
    expect(() =>
      resolveRelayOptions({
        kafka: { ...kafka, client: 'platformatic', idempotent: true, retry: { retries: 2 } },
      }),
    ).not.toThrow();
    expect(() => resolveRelayOptions({ kafka: { ...kafka, clientId: 'my relay' } })).not.toThrow();
    expect(() =>
      resolveRelayOptions({
        kafka: {
          ...kafka,
          sasl: {
            mechanism: 'aws',
            authorizationIdentity: 'a',
            accessKeyId: 'k',
            secretAccessKey: 's',
          },
        },
      }),
    ).not.toThrow();
  });
});
