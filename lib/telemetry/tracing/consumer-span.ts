import type { Counter, Histogram } from '@opentelemetry/api';
import { KAFKA_HEADERS } from '../../documents/outbox-event.envelope';
import { INSTRUMENTATION_SCOPE, openTelemetry } from './opentelemetry.loader';
import type { OpenTelemetryApi } from './opentelemetry.loader';
import { contextFromHeaders } from './w3c-trace-context';

export interface ConsumedMessageRef {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Readonly<Record<string, string>>;
}

/**
 * Runs `fn` (an `@IdempotentHandler` delivery) in a `process <topic>` CONSUMER span, child of the
 * message's trace context (the relay's producer span), so the handler and what it emits join the
 * emitting call's trace; `outcome` names how it ended (`outbox.consume.outcome`). Also records
 * `messaging.process.duration` and `messaging.client.consumed.messages`. Without
 * `@opentelemetry/api`, just `fn()`.
 */
export async function inConsumerSpan<T>(
  message: ConsumedMessageRef,
  consumer: string,
  fn: () => Promise<T>,
  outcome?: (result: T) => string,
): Promise<T> {
  const api = openTelemetry();
  if (!api) return fn();
  const parent = contextFromHeaders(api, message.headers) ?? api.context.active();
  const tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
  const eventId = message.headers[KAFKA_HEADERS.id];
  const metricAttributes: Record<string, string> = {
    'messaging.system': 'kafka',
    'messaging.operation.name': 'process',
    'messaging.destination.name': message.topic,
    'outbox.consumer': consumer,
  };
  const span = tracer.startSpan(
    `process ${message.topic}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        ...metricAttributes,
        'messaging.operation.type': 'process',
        'messaging.destination.partition.id': String(message.partition),
        'messaging.kafka.offset': Number(message.offset),
        ...(message.key !== null ? { 'messaging.kafka.message.key': message.key } : {}),
        ...(eventId ? { 'messaging.message.id': eventId, 'cloudevents.event_id': eventId } : {}),
        ...(message.headers[KAFKA_HEADERS.type]
          ? { 'cloudevents.event_type': message.headers[KAFKA_HEADERS.type] }
          : {}),
      },
    },
    parent,
  );
  const started = performance.now();
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), fn);
    if (outcome) span.setAttribute('outbox.consume.outcome', outcome(result));
    return result;
  } catch (error) {
    metricAttributes['error.type'] = (error as Error)?.name ?? 'Error';
    span.recordException(error as Error);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
    span.setAttribute('error.type', metricAttributes['error.type']);
    throw error;
  } finally {
    span.end();
    const instruments = consumerInstruments(api);
    instruments.duration.record((performance.now() - started) / 1000, metricAttributes);
    instruments.consumed.add(1, metricAttributes);
  }
}

let instrumentsOf: { provider: unknown; consumed: Counter; duration: Histogram } | undefined;

/** Created once per registered meter provider. */
function consumerInstruments(api: OpenTelemetryApi) {
  const provider = api.metrics.getMeterProvider();
  if (instrumentsOf?.provider !== provider) {
    const meter = provider.getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
    instrumentsOf = {
      provider,
      consumed: meter.createCounter('messaging.client.consumed.messages', {
        description: 'Messages handed to @IdempotentHandler methods',
        unit: '{message}',
      }),
      duration: meter.createHistogram('messaging.process.duration', {
        description: 'Duration of one @IdempotentHandler delivery',
        unit: 's',
      }),
    };
  }
  return instrumentsOf;
}
