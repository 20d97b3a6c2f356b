import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { OutboxConsumerMetrics } from '../../consumer/flow/consumer.metrics';
import { resolveOutboxOptions } from '../../options/outbox-options.validator';
import type { OutboxRelay } from '../../relay/outbox.relay';
import { OutboxRelayMetrics } from '../../relay/relay.metrics';
import type { KafkaSender, TopicBatch } from '../../publisher/kafka/kafka.sender';
import { registerConsumerInstruments } from './consumer-metrics.instruments';
import { inConsumerSpan } from '../tracing/consumer-span';
import { instrumentKafkaSender } from '../../publisher/kafka/kafka-producer.telemetry';
import { openTelemetry } from '../tracing/opentelemetry.loader';
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

/** A reader on the global meter provider of the enclosing suite, shut down after it. */
function globalPullReader(): { reader: PullReader; provider: MeterProvider } {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  beforeAll(() => metrics.setGlobalMeterProvider(provider));
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });
  return { reader, provider };
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
  const { reader, provider } = globalPullReader();

  const collect = () => reader.byName();
  const valueOf = (metric: MetricData | undefined) => metric?.dataPoints[0]?.value;

  it("exposes the relay's counters and gauges, read at collection time", async () => {
    const relayMetrics = new OutboxRelayMetrics();
    const relay = { status: () => status } as unknown as OutboxRelay;
    const options = resolveOutboxOptions({ relay: { kafka: { brokers: ['127.0.0.1:1'] } } });
    const telemetry = new OutboxTelemetry(
      options.relay,
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

  it('does not report outbox.relay.partitions.owned with one partition', async () => {
    const telemetry = new OutboxTelemetry(
      resolveOutboxOptions({ relay: { kafka: { brokers: ['127.0.0.1:1'] } } }).relay,
      Object.assign(new OutboxRelayMetrics(), { pendingCount: 3 }),
      { status: () => status } as unknown as OutboxRelay,
      new OutboxConsumerMetrics(),
    );
    telemetry.onModuleInit();
    const collected = await collect();
    expect(collected.get('outbox.relay.partitions.owned')).toBeUndefined();
    expect(collected.get('outbox.relay.pending')?.dataPoints).toEqual([
      expect.objectContaining({ value: 3, attributes: { 'outbox.relay.name': 'default' } }),
    ]);
    telemetry.onModuleDestroy();
  });

  it('with partitions: pending and lag per partition held (outbox.relay.partition), and the count held', async () => {
    // A provider of its own: the series of other tests do not mix in.
    const ownReader = new PullReader();
    const ownProvider = new MeterProvider({ readers: [ownReader] });
    metrics.disable();
    metrics.setGlobalMeterProvider(ownProvider);
    const relayMetrics = Object.assign(new OutboxRelayMetrics(), {
      pendingCount: 7, // the sum over the partitions held: not reported as such
      oldestPendingAgeMs: 4000,
      leader: true,
    });
    const partition = (p: number, owned: boolean, pendingCount?: number, ageMs?: number) => ({
      partition: p,
      owner: owned ? 'me' : 'other',
      owned,
      stream: owned ? ('following' as const) : ('stopped' as const),
      ...(owned ? { pendingCount, oldestPendingAgeMs: ageMs } : {}),
    });
    let partitions = [
      partition(0, true, 3, 4000),
      partition(1, false),
      partition(2, true, 4, 1500),
    ];
    const relay = { status: () => ({ ...status, partitions }) } as unknown as OutboxRelay;
    const telemetry = new OutboxTelemetry(
      resolveOutboxOptions({ relay: { kafka: { brokers: ['127.0.0.1:1'] }, partitions: 3 } }).relay,
      relayMetrics,
      relay,
      new OutboxConsumerMetrics(),
    );
    telemetry.onModuleInit();
    const byPartition = (metric: MetricData | undefined) =>
      Object.fromEntries(
        (metric?.dataPoints ?? []).map((point) => [
          String(point.attributes['outbox.relay.partition']),
          point.value,
        ]),
      );
    try {
      let collected = await ownReader.byName();
      expect(byPartition(collected.get('outbox.relay.pending'))).toEqual({ '0': 3, '2': 4 });
      expect(byPartition(collected.get('outbox.relay.lag'))).toEqual({ '0': 4, '2': 1.5 });
      expect(collected.get('outbox.relay.pending')?.dataPoints[0].attributes).toEqual({
        'outbox.relay.name': 'default',
        'outbox.relay.partition': 0,
      });
      expect(collected.get('outbox.relay.partitions.owned')?.dataPoints).toEqual([
        expect.objectContaining({ value: 2, attributes: { 'outbox.relay.name': 'default' } }),
      ]);
      expect(collected.get('outbox.relay.partitions.owned')?.descriptor.unit).toBe('{partition}');
      // Instance-wide values keep their series.
      expect(valueOf(collected.get('outbox.relay.leader'))).toBe(1);
      expect(collected.get('outbox.relay.leader')?.dataPoints).toHaveLength(1);

      // Partition 2 handed over, 1 taken: 2 reads 0 here (its new holder reports it).
      partitions = [partition(0, true, 1, 500), partition(1, true, 2, 800), partition(2, false)];
      collected = await ownReader.byName();
      expect(byPartition(collected.get('outbox.relay.pending'))).toEqual({
        '0': 1,
        '1': 2,
        '2': 0,
      });
      expect(byPartition(collected.get('outbox.relay.lag'))).toEqual({
        '0': 0.5,
        '1': 0.8,
        '2': 0,
      });
      expect(valueOf(collected.get('outbox.relay.partitions.owned'))).toBe(2);
    } finally {
      telemetry.onModuleDestroy();
      await ownProvider.shutdown();
      metrics.disable();
      metrics.setGlobalMeterProvider(provider);
    }
  });

  it('with tenants: pending and lag per tenant database (outbox.tenant.database), at most metricsTenantLimit names, then other', async () => {
    const ownReader = new PullReader();
    const ownProvider = new MeterProvider({ readers: [ownReader] });
    metrics.disable();
    metrics.setGlobalMeterProvider(ownProvider);
    const followed = (database: string, pendingCount: number, ageMs: number) => ({
      database,
      state: 'followed' as const,
      stream: 'following' as const,
      pendingCount,
      oldestPendingAgeMs: ageMs,
    });
    let tenants = [
      followed('tenant_a', 3, 4000),
      followed('tenant_b', 1, 500),
      followed('tenant_c', 5, 2000),
      followed('tenant_d', 2, 6000),
    ];
    const relay = { status: () => ({ ...status, tenants }) } as unknown as OutboxRelay;
    const options = resolveOutboxOptions({
      relay: { kafka: { brokers: ['127.0.0.1:1'] } },
      tenants: { databases: /^tenant_/, metricsTenantLimit: 2 },
    });
    const telemetry = new OutboxTelemetry(
      options.relay,
      Object.assign(new OutboxRelayMetrics(), { pendingCount: 11, oldestPendingAgeMs: 6000 }),
      relay,
      new OutboxConsumerMetrics(),
      options.tenants,
    );
    telemetry.onModuleInit();
    const byTenant = (metric: MetricData | undefined) =>
      Object.fromEntries(
        (metric?.dataPoints ?? []).map((point) => [
          String(point.attributes['outbox.tenant.database']),
          point.value,
        ]),
      );
    try {
      let collected = await ownReader.byName();
      // The first two databases keep their names; the sum of the instance is not reported.
      expect(byTenant(collected.get('outbox.relay.pending'))).toEqual({
        tenant_a: 3,
        tenant_b: 1,
        other: 7,
      });
      expect(byTenant(collected.get('outbox.relay.lag'))).toEqual({
        tenant_a: 4,
        tenant_b: 0.5,
        other: 6,
      });
      expect(collected.get('outbox.relay.pending')?.dataPoints[0].attributes).toEqual({
        'outbox.relay.name': 'default',
        'outbox.tenant.database': 'tenant_a',
      });

      // tenant_a let go, tenant_e added: a keeps its series at 0, e goes to other.
      tenants = [
        { ...followed('tenant_a', 0, 0), state: 'released' as never, stream: 'stopped' as never },
        followed('tenant_b', 2, 700),
        followed('tenant_e', 4, 100),
      ];
      collected = await ownReader.byName();
      expect(byTenant(collected.get('outbox.relay.pending'))).toEqual({
        tenant_a: 0,
        tenant_b: 2,
        other: 4,
      });
    } finally {
      telemetry.onModuleDestroy();
      await ownProvider.shutdown();
      metrics.disable();
      metrics.setGlobalMeterProvider(provider);
    }
  });

  it('registers the consumer instruments in an app without a relay too', async () => {
    const consumerMetrics = new OutboxConsumerMetrics();
    consumerMetrics.applied = 4;
    const telemetry = new OutboxTelemetry(
      resolveOutboxOptions({ relay: false }).relay,
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
      replaceProducer: async () => undefined,
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
  const { reader } = globalPullReader();

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
