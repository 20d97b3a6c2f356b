import type { Attributes, BatchObservableResult } from '@opentelemetry/api';
import type { OutboxRelayMetrics } from '../../relay/relay.metrics';
import type { RelayStatus } from '../../relay/relay.status';
import { INSTRUMENTATION_SCOPE } from '../tracing/opentelemetry.loader';
import type { OpenTelemetryApi } from '../tracing/opentelemetry.loader';
import { TENANT_ATTRIBUTE, TenantSeriesNames } from './tenant-attribute';

/** What the instruments read at each collection. */
export interface RelayMetricsSource {
  metrics: OutboxRelayMetrics;
  status(): RelayStatus;
  /** `relay.name` (the `outbox.relay.name` attribute). */
  relayName: string;
  /** With the `tenants` option: `tenants.metricsTenantLimit`. */
  tenantLimit?: number;
}

/** The attribute of the per-partition values (`relay.partitions` > 1). */
export const PARTITION_ATTRIBUTE = 'outbox.relay.partition';

const COUNTERS = [
  ['outbox.relay.published', 'Events the broker acknowledged', '{event}', 'published'],
  ['outbox.relay.retried', 'Failed publish attempts scheduled for a retry', '{event}', 'retried'],
  ['outbox.relay.dead_lettered', 'Events moved to the dead letters', '{event}', 'deadLettered'],
  [
    'outbox.relay.recoveries',
    'Times the stream position was lost and the relay recovered from the collection',
    '{recovery}',
    'recoveries',
  ],
  ['outbox.relay.outages', 'Times publishing paused: broker unavailable', '{outage}', 'outages'],
] as const;

/**
 * The relay's counters and gauges as observable OpenTelemetry instruments (README, "Metrics"),
 * read from `OutboxRelayMetrics` and the relay's status when the application's reader collects.
 * Returns the function that removes them. With several partitions, `outbox.relay.pending` and
 * `outbox.relay.lag` are one value per partition this instance holds (attribute
 * `outbox.relay.partition`) and `outbox.relay.partitions.owned` counts them; the rest stays the
 * instance's. With one partition: no such attribute, no `partitions.owned`. With the `tenants`
 * option, `pending` and `lag` are one value per tenant database instead (attribute
 * `outbox.tenant.database`, at most `tenantLimit` names, then `other`).
 */
export function registerRelayInstruments(
  api: OpenTelemetryApi,
  source: RelayMetricsSource,
): () => void {
  const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
  const gauge = (name: string, description: string, unit: string) =>
    meter.createObservableGauge(name, { description, unit });
  const counters = COUNTERS.map(
    ([name, description, unit, field]) =>
      [meter.createObservableCounter(name, { description, unit }), field] as const,
  );
  const pending = gauge('outbox.relay.pending', 'Pending events in the outbox', '{event}');
  const lag = gauge('outbox.relay.lag', 'Age of the oldest pending event', 's');
  const checkpointAge = gauge(
    'outbox.relay.checkpoint.age',
    'Time since this relay last saved its stream position',
    's',
  );
  const leader = gauge('outbox.relay.leader', '1 while this instance publishes, else 0', '1');
  const inFlight = gauge('outbox.relay.in_flight', 'Events held in memory', '{event}');
  const held = gauge(
    'outbox.relay.held_destinations',
    'Topics or partitions held back because they refuse events',
    '{destination}',
  );

  const owned = gauge(
    'outbox.relay.partitions.owned',
    'Partitions this instance holds (relay.partitions > 1)',
    '{partition}',
  );

  const attributes: Attributes = { 'outbox.relay.name': source.relayName };
  const ofPartition = (partition: number): Attributes => ({
    ...attributes,
    [PARTITION_ATTRIBUTE]: partition,
  });
  /** Partitions this instance reported pending/lag for (held now or before). */
  const reported = new Set<number>();
  const tenantSeries =
    source.tenantLimit === undefined ? undefined : new TenantSeriesNames(source.tenantLimit);
  const callback = (result: BatchObservableResult) => {
    const m = source.metrics;
    const status = source.status();
    for (const [instrument, field] of counters) result.observe(instrument, m[field], attributes);
    if (status.partitions) {
      // Per partition held, from its own sweep. A partition handed over reads 0 on this
      // instance from then on: cumulative readers would otherwise repeat its last figure.
      const mine = status.partitions.filter((partition) => partition.owned);
      for (const { partition, pendingCount, oldestPendingAgeMs } of mine) {
        reported.add(partition);
        if (pendingCount !== undefined)
          result.observe(pending, pendingCount, ofPartition(partition));
        if (oldestPendingAgeMs !== undefined)
          result.observe(lag, oldestPendingAgeMs / 1000, ofPartition(partition));
      }
      for (const partition of reported) {
        if (mine.some((own) => own.partition === partition)) continue;
        result.observe(pending, 0, ofPartition(partition));
        result.observe(lag, 0, ofPartition(partition));
      }
      result.observe(owned, mine.length, attributes);
    } else if (tenantSeries) {
      for (const [tenant, series] of tenantSeries.series(status.tenants ?? [])) {
        const ofTenant = { ...attributes, [TENANT_ATTRIBUTE]: tenant };
        result.observe(pending, series.pending, ofTenant);
        result.observe(lag, series.lagMs / 1000, ofTenant);
      }
    } else {
      if (m.pendingCount !== undefined) result.observe(pending, m.pendingCount, attributes);
      if (m.oldestPendingAgeMs !== undefined)
        result.observe(lag, m.oldestPendingAgeMs / 1000, attributes);
    }
    const age = m.checkpointAgeMs;
    if (age !== undefined) result.observe(checkpointAge, age / 1000, attributes);
    result.observe(leader, m.leader ? 1 : 0, attributes);
    result.observe(inFlight, status.inFlight.events, attributes);
    result.observe(held, status.heldDestinations.length, attributes);
  };
  const observables = [
    ...counters.map(([instrument]) => instrument),
    pending,
    lag,
    checkpointAge,
    leader,
    inFlight,
    held,
    owned,
  ];
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
