import type { Counter, Histogram, Span } from '@opentelemetry/api';
import { KAFKA_HEADERS } from '../../documents/outbox-event.envelope';
import type { KafkaSender, PartitionedMessage, TopicBatch } from './kafka.sender';
import { INSTRUMENTATION_SCOPE, openTelemetry } from '../../telemetry/tracing/opentelemetry.loader';
import type { OpenTelemetryApi } from '../../telemetry/tracing/opentelemetry.loader';
import { contextFromHeaders, injectTraceHeaders } from '../../telemetry/tracing/w3c-trace-context';

/**
 * The relay's producer telemetry: `sender` itself when OpenTelemetry is not installed, else a
 * sender that, for every message it sends, starts a `send <topic>` span (kind PRODUCER,
 * OpenTelemetry messaging conventions), a child of the trace context stored with the event when
 * it was emitted, writes that span's context into the message's `traceparent`/`tracestate`
 * headers, and ends it with the broker's answer. One trace then runs from the emitting call
 * through the relay to the consumer. It also records the conventions' client metrics:
 * `messaging.client.sent.messages` (per topic) and `messaging.client.operation.duration`.
 */
export function instrumentKafkaSender(
  sender: KafkaSender,
  /** The publisher's clock, ms (the relay simulation drives it): times the produce calls. */
  now: () => number = Date.now,
): KafkaSender {
  const api = openTelemetry();
  return api ? new TracingKafkaSender(sender, api, now) : sender;
}

/** Span attributes of one message (messaging and CloudEvents semantic conventions). */
function attributesOf(topic: string, message: PartitionedMessage) {
  const headers = message.headers;
  return {
    'messaging.system': 'kafka',
    'messaging.operation.name': 'send',
    'messaging.operation.type': 'send',
    /** The name older conventions (before 1.26) used. */
    'messaging.operation': 'publish',
    'messaging.destination.name': topic,
    ...(message.partition !== undefined
      ? { 'messaging.destination.partition.id': String(message.partition) }
      : {}),
    'messaging.kafka.message.key': message.key,
    'messaging.message.id': headers[KAFKA_HEADERS.id],
    'cloudevents.event_id': headers[KAFKA_HEADERS.id],
    'cloudevents.event_type': headers[KAFKA_HEADERS.type],
    'cloudevents.event_source': headers[KAFKA_HEADERS.source],
    'cloudevents.event_subject': headers[KAFKA_HEADERS.subject],
  };
}

class TracingKafkaSender implements KafkaSender {
  private readonly sentMessages: Counter;
  private readonly duration: Histogram;

  constructor(
    private readonly inner: KafkaSender,
    private readonly api: OpenTelemetryApi,
    private readonly now: () => number,
  ) {
    const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
    this.sentMessages = meter.createCounter('messaging.client.sent.messages', {
      description: 'Messages the relay attempted to send to Kafka',
      unit: '{message}',
    });
    this.duration = meter.createHistogram('messaging.client.operation.duration', {
      description: 'Duration of one produce call of the relay',
      unit: 's',
    });
  }

  connect(): Promise<void> {
    return this.inner.connect();
  }

  partitionCount(topic: string): Promise<number> {
    return this.inner.partitionCount(topic);
  }

  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    const { api } = this;
    const tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
    const spans: Span[] = [];
    const traced = batches.map((batch) => ({
      topic: batch.topic,
      messages: batch.messages.map((message) => {
        const parent = contextFromHeaders(api, message.headers) ?? api.ROOT_CONTEXT;
        const span = tracer.startSpan(
          `send ${batch.topic}`,
          { kind: api.SpanKind.PRODUCER, attributes: attributesOf(batch.topic, message) },
          parent,
        );
        spans.push(span);
        // Without an SDK the span is a no-op one: the event's own trace headers stay as they are.
        if (!api.trace.isSpanContextValid(span.spanContext())) return message;
        const headers = { ...message.headers };
        injectTraceHeaders(api, api.trace.setSpan(parent, span), headers);
        return { ...message, headers };
      }),
    }));
    const started = this.now();
    try {
      await this.inner.send(traced, signal);
    } catch (error) {
      this.record(batches, started, (error as Error)?.name ?? 'Error');
      for (const span of spans) {
        span.recordException(error as Error);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
        span.setAttribute('error.type', (error as Error)?.name ?? 'Error');
        span.end();
      }
      throw error;
    }
    this.record(batches, started, undefined);
    for (const span of spans) span.end();
  }

  private record(batches: readonly TopicBatch[], started: number, errorType?: string): void {
    const common = {
      'messaging.system': 'kafka',
      'messaging.operation.name': 'send',
      ...(errorType ? { 'error.type': errorType } : {}),
    };
    this.duration.record((this.now() - started) / 1000, common);
    for (const batch of batches) {
      this.sentMessages.add(batch.messages.length, {
        ...common,
        'messaging.destination.name': batch.topic,
      });
    }
  }
}
