import { context, SpanKind, trace } from '@opentelemetry/api';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { OutboxEmitter, TransactionRunner } from '../../lib';
import { describeWith, readTopic, waitFor } from '../harness';
import { installOpenTelemetry } from '../harness/opentelemetry';
import { relayTestBed } from '../relay/support/relay-app';

/**
 * With the OpenTelemetry SDK installed (in-memory exporters), an event emitted inside a request
 * span reaches Kafka in the same trace: the relay's producer span is a child of the request span,
 * and the message's traceparent names the producer span. The relay's metrics reach the SDK.
 */
describeWith(['mongodb', 'kafka'], 'one trace from the emitting call to Kafka', () => {
  const otel = installOpenTelemetry();
  const bed = relayTestBed('trace');
  afterAll(() => otel.shutdown());

  it('stores the request context, sends in a child producer span, and puts it in the message headers', async () => {
    await bed.startRelay();
    const runner = bed.writer.app.get(TransactionRunner);
    const emitter = bed.writer.app.get(OutboxEmitter);
    const request = otel.tracer.startSpan('POST /orders', { kind: SpanKind.SERVER });
    const eventId = await context.with(trace.setSpan(context.active(), request), () =>
      runner.run(async () =>
        emitter.emit({
          eventType: 'OrderPlaced',
          aggregateType: 'Order',
          aggregateId: 'traced-1',
          payload: { total: 3 },
        }),
      ),
    );
    request.end();
    const { traceId, spanId } = request.spanContext();
    const stored = await bed.writer.connection.collection('outbox').findOne({ eventId });
    expect(stored?.headers).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });

    const [record] = await readTopic(bed.topic, { count: 1, timeoutMs: 60_000 });
    await waitFor(
      () => otel.spans.getFinishedSpans().some((span) => span.name === `send ${bed.topic}`),
      10_000,
      'the producer span',
    );
    const producer = otel.spans
      .getFinishedSpans()
      .find((span) => span.name === `send ${bed.topic}`)!;
    expect(producer.kind).toBe(SpanKind.PRODUCER);
    expect(producer.spanContext().traceId).toBe(traceId);
    expect(producer.parentSpanContext?.spanId).toBe(spanId);
    expect(producer.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': bed.topic,
      'messaging.message.id': eventId,
    });
    expect(record.headers.ce_id).toBe(eventId);
    expect(record.headers.traceparent).toBe(`00-${traceId}-${producer.spanContext().spanId}-01`);

    const metrics = new Map<string, MetricData>(
      (await otel.collectMetrics()).map((metric) => [metric.descriptor.name, metric]),
    );
    expect(metrics.get('outbox.relay.published')?.dataPoints[0].value).toBeGreaterThanOrEqual(1);
    expect(metrics.get('outbox.relay.leader')?.dataPoints[0].value).toBe(1);
    const sent = metrics.get('messaging.client.sent.messages')?.dataPoints ?? [];
    expect(
      sent.find((point) => point.attributes['messaging.destination.name'] === bed.topic)?.value,
    ).toBeGreaterThanOrEqual(1);
  });
});
