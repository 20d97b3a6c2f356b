import type { Context, Counter, Histogram, Span } from '@opentelemetry/api';
import { KAFKA_HEADERS } from '../../documents/outbox-event.envelope';
import type { KafkaSender, PartitionedMessage, TopicBatch } from './kafka.sender';
import { INSTRUMENTATION_SCOPE, openTelemetry } from '../../telemetry/tracing/opentelemetry.loader';
import type { OpenTelemetryApi } from '../../telemetry/tracing/opentelemetry.loader';
import { contextFromHeaders, injectTraceHeaders } from '../../telemetry/tracing/w3c-trace-context';

/**
 * `sender` itself without OpenTelemetry, else a sender that gives every message a `send <topic>`
 * span (kind PRODUCER, messaging conventions), child of the trace context stored at emit, written
 * into its `traceparent`/`tracestate` and ended with the broker's answer: one trace runs from the
 * emitting call through the relay to the consumer. It also records the conventions'
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

/** The message with the trace headers of `context` written into a copy of its headers. */
function withTraceHeaders(
  api: OpenTelemetryApi,
  message: PartitionedMessage,
  context: Context,
): PartitionedMessage {
  const headers = { ...message.headers };
  injectTraceHeaders(api, context, headers);
  return { ...message, headers };
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

  readonly connect = (): Promise<void> => this.inner.connect();
  readonly partitionCount = (topic: string): Promise<number> => this.inner.partitionCount(topic);
  readonly disconnect = (): Promise<void> => this.inner.disconnect();
  readonly replaceProducer = (): Promise<void> => this.inner.replaceProducer();

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    const { api } = this;
    const spans: Span[] = [];
    let sent: readonly TopicBatch[];
    if (this.tracerRegistered()) {
      const tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version);
      sent = batches.map((batch) => ({
        topic: batch.topic,
        messages: batch.messages.map((message) => {
          const parent = contextFromHeaders(api, message.headers) ?? api.ROOT_CONTEXT;
          const span = tracer.startSpan(
            `send ${batch.topic}`,
            { kind: api.SpanKind.PRODUCER, attributes: attributesOf(batch.topic, message) },
            parent,
          );
          spans.push(span);
          // A span that is not sampled may carry an invalid context: the headers stay as they are.
          if (!api.trace.isSpanContextValid(span.spanContext())) return message;
          return withTraceHeaders(api, message, api.trace.setSpan(parent, span));
        }),
      }));
    } else sent = this.withValidTraceHeaders(batches);
    const started = this.now();
    try {
      await this.inner.send(sent, signal);
    } catch (error) {
      const errorType = (error as Error)?.name ?? 'Error';
      this.record(batches, started, errorType);
      for (const span of spans) {
        span.recordException(error as Error);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
        span.setAttribute('error.type', errorType);
        span.end();
      }
      throw error;
    }
    this.record(batches, started, undefined);
    for (const span of spans) span.end();
  }

  /**
   * Whether spans would be recorded: a tracer provider is registered (an SDK). Read at every
   * send, so one registered later is used from the next batch on. Without one, the API's proxy
   * hands out its no-op tracer.
   */
  private tracerRegistered(): boolean {
    const provider = this.api.trace.getTracerProvider();
    return (
      !(provider instanceof this.api.ProxyTracerProvider) ||
      provider.getDelegateTracer(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version) !==
        undefined
    );
  }

  /**
   * The messages with no tracer provider registered: what the no-op tracer would do, without its
   * per-message span objects. Its span for a message is a non-recording one carrying the context
   * of the event's trace headers when they hold a valid one (the headers are then written again
   * from it, as with a real tracer), else an invalid one (the message is sent as it is); ending
   * such spans, or recording an error on them, does nothing. The metrics are recorded the same.
   */
  private withValidTraceHeaders(batches: readonly TopicBatch[]): readonly TopicBatch[] {
    const { api } = this;
    let sent: readonly TopicBatch[] = batches;
    for (let b = 0; b < batches.length; b++) {
      const messages = batches[b].messages;
      for (let i = 0; i < messages.length; i++) {
        const parent = contextFromHeaders(api, messages[i].headers);
        const span = parent && api.trace.getSpanContext(parent);
        if (!span || typeof span.traceFlags !== 'number' || !api.trace.isSpanContextValid(span))
          continue;
        if (sent === batches)
          sent = batches.map((batch) => ({ ...batch, messages: [...batch.messages] }));
        sent[b].messages[i] = withTraceHeaders(api, messages[i], parent);
      }
    }
    return sent;
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
