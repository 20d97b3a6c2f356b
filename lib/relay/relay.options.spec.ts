import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveRelayOptions } from './relay.options';

const kafka = { brokers: ['127.0.0.1:9092'] };

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
});
