import { KAFKA_HEADERS } from '../common/envelope';
import { INSTRUMENTATION_SCOPE, openTelemetry } from './opentelemetry.loader';
import { contextFromHeaders } from './w3c-trace-context';

/** The message a consumer span is about. */
export interface ConsumedMessageRef {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Readonly<Record<string, string>>;
}

/**
 * Runs `fn` (an `@IdempotentHandler` delivery) in a `process <topic>` span of kind CONSUMER
 * (OpenTelemetry messaging conventions), a child of the trace context in the message's headers
 * (the relay's producer span), so the handler, and what it emits, joins the emitting call's
 * trace. `outcome` names how the delivery ended (attribute `outbox.consume.outcome`). Without
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
  const span = tracer.startSpan(
    `process ${message.topic}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.name': 'process',
        'messaging.operation.type': 'process',
        'messaging.destination.name': message.topic,
        'messaging.destination.partition.id': String(message.partition),
        'messaging.kafka.offset': Number(message.offset),
        ...(message.key !== null ? { 'messaging.kafka.message.key': message.key } : {}),
        ...(eventId ? { 'messaging.message.id': eventId, 'cloudevents.event_id': eventId } : {}),
        ...(message.headers[KAFKA_HEADERS.type]
          ? { 'cloudevents.event_type': message.headers[KAFKA_HEADERS.type] }
          : {}),
        'outbox.consumer': consumer,
      },
    },
    parent,
  );
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), fn);
    if (outcome) span.setAttribute('outbox.consume.outcome', outcome(result));
    return result;
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
    span.setAttribute('error.type', (error as Error)?.name ?? 'Error');
    throw error;
  } finally {
    span.end();
  }
}
