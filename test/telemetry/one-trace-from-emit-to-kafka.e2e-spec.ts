import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { context, SpanKind, trace } from '@opentelemetry/api';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { IdempotentHandler, OutboxEmitter, TransactionRunner } from '../../lib';
import { startConsumerApp } from '../consumer/consumer-app.fixtures';
import type { ConsumerApp } from '../consumer/consumer-app.fixtures';
import { describeWith, readTopic, waitFor } from '../harness';
import { installOpenTelemetry } from '../harness/opentelemetry';
import { relayTestBed } from '../relay/support/relay-app';

/** What the handler saw of the active trace. */
const seenByHandler: Array<{ eventId: string; traceId?: string; spanId?: string }> = [];

@Controller()
class TracedOrders {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'traced-orders' })
  async onPlaced(@Payload() _event: unknown, @Ctx() ctx: KafkaContext) {
    const span = trace.getActiveSpan()?.spanContext();
    seenByHandler.push({
      eventId: String(ctx.getMessage().headers?.ce_id),
      traceId: span?.traceId,
      spanId: span?.spanId,
    });
  }
}

/**
 * With the OpenTelemetry SDK installed (in-memory exporters), an event emitted inside a request
 * span is one trace through the real relay, broker and consumer: request span -> the relay's
 * producer span (its traceparent in the Kafka message) -> the consumer's process span, in which
 * the @IdempotentHandler runs. The relay's and the consumer's metrics reach the SDK.
 */
describeWith(['mongodb', 'kafka'], 'one trace from the emitting call to the handler', () => {
  const otel = installOpenTelemetry();
  const bed = relayTestBed('trace');
  let consumer: ConsumerApp | undefined;
  afterAll(async () => {
    await consumer?.close();
    await otel.shutdown();
  });

  it('stores the request context, sends in a child producer span, and the handler runs in a child consumer span', async () => {
    await bed.startRelay();
    consumer = await startConsumerApp(
      `${bed.db}-consumer`,
      [TracedOrders],
      {},
      {
        outboxServerTopics: [bed.topic],
      },
    );
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

    await waitFor(() => seenByHandler.some((s) => s.eventId === eventId), 60_000, 'the handler');
    const processSpan = otel.spans
      .getFinishedSpans()
      .find((span) => span.name === `process ${bed.topic}`)!;
    expect(processSpan.kind).toBe(SpanKind.CONSUMER);
    expect(processSpan.spanContext().traceId).toBe(traceId);
    expect(processSpan.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(processSpan.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.message.id': eventId,
      'outbox.consumer': 'traced-orders',
      'outbox.consume.outcome': 'applied',
    });
    expect(seenByHandler.find((s) => s.eventId === eventId)).toEqual({
      eventId,
      traceId,
      spanId: processSpan.spanContext().spanId,
    });

    const metrics = new Map<string, MetricData>(
      (await otel.collectMetrics()).map((metric) => [metric.descriptor.name, metric]),
    );
    expect(metrics.get('outbox.relay.published')?.dataPoints[0].value).toBeGreaterThanOrEqual(1);
    expect(metrics.get('outbox.relay.leader')?.dataPoints[0].value).toBe(1);
    const sent = metrics.get('messaging.client.sent.messages')?.dataPoints ?? [];
    expect(
      sent.find((point) => point.attributes['messaging.destination.name'] === bed.topic)?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(metrics.get('outbox.consumer.applied')?.dataPoints[0].value).toBeGreaterThanOrEqual(1);
    expect(metrics.get('messaging.process.duration')?.dataPoints.length).toBeGreaterThanOrEqual(1);
  });
});
