import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { OutboxConsumerMetrics } from '../consumer/consumer.metrics';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import type { OutboxRelay } from '../relay/outbox.relay';
import { OutboxRelayMetrics } from '../relay/relay.metrics';
import type { KafkaSender, TopicBatch } from '../publisher/kafka/kafka.sender';
import { registerConsumerInstruments } from './consumer-metrics.instruments';
import { inConsumerSpan } from './consumer-span';
import { instrumentKafkaSender } from './kafka-producer.telemetry';
import { openTelemetry } from './opentelemetry.loader';
import { OutboxTelemetry } from './outbox-telemetry.service';

/** A reader the test pulls from (what a Prometheus scrape does). */
class PullReader extends MetricReader {
  protected async onShutdown() {}
  protected async onForceFlush() {}

  /** Every instrument's current data, by name. */
  async byName(): Promise<Map<string, MetricData>> {
    const { resourceMetrics } = await this.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    return new Map(all.map((metric) => [metric.descriptor.name, metric]));
  }
}

const status = {
  running: true,
  role: 'leader' as const,
  stream: 'following' as const,
  heldDestinations: [{ destination: 'Order#1', since: 0, retryAt: 0, failures: 1, lastError: 'x' }],
  inFlight: { events: 7, bytes: 700 },
  trackedAggregates: 2,
};

describe('metrics through the OpenTelemetry metrics API', () => {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });

  beforeAll(() => metrics.setGlobalMeterProvider(provider));
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });

  const collect = () => reader.byName();
  const valueOf = (metric: MetricData | undefined) => metric?.dataPoints[0]?.value;

  it("exposes the relay's counters and gauges, read at collection time", async () => {
    const relayMetrics = new OutboxRelayMetrics();
    const relay = { status: () => status } as unknown as OutboxRelay;
    const options = resolveOutboxOptions({ relay: { kafka: { brokers: ['127.0.0.1:1'] } } });
    const telemetry = new OutboxTelemetry(
      options,
      relayMetrics,
      relay,
      new OutboxConsumerMetrics(),
    );
    telemetry.onModuleInit();
    expect(telemetry.enabled).toBe(true);

    Object.assign(relayMetrics, {
      published: 12,
      retried: 3,
      deadLettered: 1,
      recoveries: 1,
      outages: 2,
      pendingCount: 40,
      oldestPendingAgeMs: 2500,
      leader: true,
    });
    const collected = await collect();
    expect(valueOf(collected.get('outbox.relay.published'))).toBe(12);
    expect(valueOf(collected.get('outbox.relay.retried'))).toBe(3);
    expect(valueOf(collected.get('outbox.relay.dead_lettered'))).toBe(1);
    expect(valueOf(collected.get('outbox.relay.recoveries'))).toBe(1);
    expect(valueOf(collected.get('outbox.relay.outages'))).toBe(2);
    expect(valueOf(collected.get('outbox.relay.pending'))).toBe(40);
    expect(valueOf(collected.get('outbox.relay.lag'))).toBe(2.5);
    expect(collected.get('outbox.relay.lag')?.descriptor.unit).toBe('s');
    expect(valueOf(collected.get('outbox.relay.leader'))).toBe(1);
    expect(valueOf(collected.get('outbox.relay.in_flight'))).toBe(7);
    expect(valueOf(collected.get('outbox.relay.held_destinations'))).toBe(1);
    expect(collected.get('outbox.relay.published')?.dataPoints[0].attributes).toEqual({
      'outbox.relay.name': 'default',
    });

    relayMetrics.published = 20;
    expect(valueOf((await collect()).get('outbox.relay.published'))).toBe(20);

    telemetry.onModuleDestroy();
    expect(telemetry.enabled).toBe(false);
  });

  it('registers the consumer instruments in an app without a relay too', async () => {
    const consumerMetrics = new OutboxConsumerMetrics();
    consumerMetrics.applied = 4;
    const telemetry = new OutboxTelemetry(
      resolveOutboxOptions({ relay: false }),
      new OutboxRelayMetrics(),
      {} as OutboxRelay,
      consumerMetrics,
    );
    telemetry.onModuleInit();
    const collected = await collect();
    expect(collected.get('outbox.consumer.applied')?.dataPoints[0].value).toBe(4);
    expect(telemetry.enabled).toBe(true);
    telemetry.onModuleDestroy();
  });

  it('counts the messages the producer sent, per topic, and the duration of each call', async () => {
    const inner: KafkaSender = {
      connect: async () => undefined,
      disconnect: async () => undefined,
      partitionCount: async () => 1,
      send: async (_batches: readonly TopicBatch[]) => undefined,
    };
    const message = { key: 'k', value: '{}', headers: { ce_id: 'e' } };
    await instrumentKafkaSender(inner).send([
      { topic: 'shop.Order', messages: [message, message] },
      { topic: 'shop.Invoice', messages: [message] },
    ]);
    const collected = await collect();
    const sent = collected.get('messaging.client.sent.messages');
    const byTopic = Object.fromEntries(
      (sent?.dataPoints ?? []).map((point) => [
        point.attributes['messaging.destination.name'],
        point.value,
      ]),
    );
    expect(byTopic).toEqual({ 'shop.Order': 2, 'shop.Invoice': 1 });
    expect(sent?.dataPoints[0].attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.name': 'send',
    });
    const duration = collected.get('messaging.client.operation.duration');
    expect(duration?.descriptor.unit).toBe('s');
    expect((duration?.dataPoints[0].value as { count: number }).count).toBe(1);
  });
});

describe('consumer metrics through the OpenTelemetry metrics API', () => {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });

  beforeAll(() => metrics.setGlobalMeterProvider(provider));
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });

  const collect = () => reader.byName();

  it("exposes the consumers' counters, read at collection time", async () => {
    const counts = Object.assign(new OutboxConsumerMetrics(), {
      applied: 5,
      duplicates: 2,
      failures: 1,
      deadLettered: 1,
      partitionPauses: 3,
    });
    const unregister = registerConsumerInstruments(openTelemetry()!, counts);
    const collected = await collect();
    expect(collected.get('outbox.consumer.applied')?.dataPoints[0].value).toBe(5);
    expect(collected.get('outbox.consumer.duplicates')?.dataPoints[0].value).toBe(2);
    expect(collected.get('outbox.consumer.dead_lettered')?.dataPoints[0].value).toBe(1);
    expect(collected.get('outbox.consumer.partition_pauses')?.dataPoints[0].value).toBe(3);
    unregister();
  });

  it('records the duration and count of each delivery run in a consumer span', async () => {
    const message = { topic: 'shop.Order', partition: 0, offset: '1', key: 'k', headers: {} };
    await inConsumerSpan(message, 'summaries', async () => 'ok');
    await expect(
      inConsumerSpan(message, 'summaries', async () => {
        throw new TypeError('bad');
      }),
    ).rejects.toThrow('bad');
    const collected = await collect();
    const consumed = collected.get('messaging.client.consumed.messages')?.dataPoints ?? [];
    expect(consumed.map((point) => [point.attributes['error.type'], point.value])).toEqual([
      [undefined, 1],
      ['TypeError', 1],
    ]);
    expect(consumed[0].attributes).toMatchObject({
      'messaging.destination.name': 'shop.Order',
      'outbox.consumer': 'summaries',
    });
    expect(collected.get('messaging.process.duration')?.descriptor.unit).toBe('s');
  });
});
