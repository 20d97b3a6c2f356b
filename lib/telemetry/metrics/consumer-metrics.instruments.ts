import type { BatchObservableResult, Observable } from '@opentelemetry/api';
import type { OutboxConsumerMetrics } from '../../consumer/flow/consumer.metrics';
import { INSTRUMENTATION_SCOPE } from '../tracing/opentelemetry.loader';
import type { OpenTelemetryApi } from '../tracing/opentelemetry.loader';

/** What the consumer instruments read: `OutboxConsumerMetrics.snapshot()`. */
export type ConsumerMetricsSource = Pick<OutboxConsumerMetrics, 'snapshot'>;

const COUNTERS = [
  ['outbox.consumer.applied', 'Events applied (handler ran, transaction committed)', 'applied'],
  ['outbox.consumer.duplicates', 'Deliveries skipped: already applied', 'duplicates'],
  ['outbox.consumer.failures', 'Failed handler attempts', 'failures'],
  ['outbox.consumer.timeouts', 'Handler attempts that timed out', 'timeouts'],
  ['outbox.consumer.dead_lettered', 'Messages dead-lettered', 'deadLettered'],
  ['outbox.consumer.partition_pauses', 'Times a partition was paused', 'partitionPauses'],
] as const;

/**
 * The `@IdempotentHandler` consumers' counters as observable OpenTelemetry counters, read from
 * `source` at each collection. Returns the function that removes them.
 */
export function registerConsumerInstruments(
  api: OpenTelemetryApi,
  source: ConsumerMetricsSource,
): () => void {
  const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
  const counters: Array<[Observable, (typeof COUNTERS)[number][2]]> = COUNTERS.map(
    ([name, description, field]) => [
      meter.createObservableCounter(name, { description, unit: '{message}' }),
      field,
    ],
  );
  const callback = (result: BatchObservableResult) => {
    const snapshot = source.snapshot();
    for (const [instrument, field] of counters) result.observe(instrument, snapshot[field]);
  };
  const observables = counters.map(([instrument]) => instrument);
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
