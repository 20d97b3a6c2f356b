import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { OutboxEventInput } from '../../documents/outbox-event.envelope';
import { OutboxEmitter } from '../../events/outbox.emitter';
import { resolveOutboxOptions } from '../../options/outbox-options.validator';
import type { KafkaSender, TopicBatch } from '../../publisher/kafka/kafka.sender';
import { fakeTransactionRunner } from '../../testing/fakes/fake-connection';
import { inConsumerSpan } from './consumer-span';
import { instrumentKafkaSender } from '../../publisher/kafka/kafka-producer.telemetry';

const event: OutboxEventInput = {
  eventType: 'OrderPlaced',
  aggregateType: 'Order',
  aggregateId: 'o-1',
  payload: { total: 5 },
};

function emitter() {
  const { connection, runner, writer } = fakeTransactionRunner();
  return {
    connection,
    runner,
    emitter: new OutboxEmitter(runner, resolveOutboxOptions({ relay: false }), writer),
  };
}

/** A sender that records what it was asked to send, and fails when told to. */
class RecordingSender implements KafkaSender {
  readonly sent: TopicBatch[] = [];
  fail?: Error;
  async connect() {}
  async disconnect() {}
  async replaceProducer(): Promise<void> {}
  async partitionCount() {
    return 1;
  }
  async send(batches: readonly TopicBatch[]) {
    if (this.fail) throw this.fail;
    this.sent.push(...batches);
  }
}

const message = (headers: Record<string, string>) => ({
  key: 'o-1',
  value: '{}',
  partition: 0,
  headers: { ce_id: 'evt-1', ce_type: 'OrderPlaced', ce_source: 'Order', ...headers },
});

describe('trace context with OpenTelemetry installed and an SDK registered', () => {
  const spans = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const tracer = trace.getTracer('spec');

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
  });
  afterEach(() => spans.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  it('stores the active span as traceparent with the emitted event', async () => {
    const { connection, runner, emitter: outbox } = emitter();
    const span = tracer.startSpan('POST /orders');
    await context.with(trace.setSpan(context.active(), span), () =>
      runner.run(async () => outbox.emit(event)),
    );
    span.end();
    const [row] = connection.docs('outbox');
    const { traceId, spanId } = span.spanContext();
    expect(row.headers).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
  });

  it('keeps a trace context the caller set itself', async () => {
    const { connection, runner, emitter: outbox } = emitter();
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const span = tracer.startSpan('request');
    await context.with(trace.setSpan(context.active(), span), () =>
      runner.run(async () => outbox.emit({ ...event, headers: { traceparent: own, x: 'y' } })),
    );
    span.end();
    expect(connection.docs('outbox')[0].headers).toEqual({ traceparent: own, x: 'y' });
  });

  it('stores nothing when no span is active', async () => {
    const { connection, runner, emitter: outbox } = emitter();
    await runner.run(async () => outbox.emit(event));
    expect(connection.docs('outbox')[0].headers).toBeUndefined();
  });

  it('sends each message in a producer span, a child of the emit-time context, and injects it', async () => {
    const inner = new RecordingSender();
    const sender = instrumentKafkaSender(inner);
    const emitTime = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await sender.send([{ topic: 'shop.Order', messages: [message({ traceparent: emitTime })] }]);

    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('send shop.Order');
    expect(span.kind).toBe(SpanKind.PRODUCER);
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'shop.Order',
      'messaging.destination.partition.id': '0',
      'messaging.message.id': 'evt-1',
      'cloudevents.event_type': 'OrderPlaced',
    });
    const sent = inner.sent[0].messages[0].headers;
    expect(sent.traceparent).toBe(
      `00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-01`,
    );
    expect(sent.ce_id).toBe('evt-1');
  });

  it('starts a new trace for an event emitted without one', async () => {
    const inner = new RecordingSender();
    await instrumentKafkaSender(inner).send([{ topic: 'Order', messages: [message({})] }]);
    const [span] = spans.getFinishedSpans();
    expect(span.parentSpanContext).toBeUndefined();
    expect(inner.sent[0].messages[0].headers.traceparent).toContain(span.spanContext().traceId);
  });

  it('ends the spans with an error status when the broker refuses', async () => {
    const inner = new RecordingSender();
    inner.fail = Object.assign(new Error('not enough replicas'), { name: 'KafkaJSProtocolError' });
    await expect(
      instrumentKafkaSender(inner).send([{ topic: 'Order', messages: [message({}), message({})] }]),
    ).rejects.toThrow('not enough replicas');
    const finished = spans.getFinishedSpans();
    expect(finished).toHaveLength(2);
    for (const span of finished) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['error.type']).toBe('KafkaJSProtocolError');
    }
  });
  it('runs a consumer delivery in a process span, a child of the message trace context', async () => {
    const producer = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
    const seen: Array<string | undefined> = [];
    const result = await inConsumerSpan(
      {
        topic: 'shop.Order',
        partition: 2,
        offset: '41',
        key: 'o-1',
        headers: { traceparent: producer, ce_id: 'evt-1', ce_type: 'OrderPlaced' },
      },
      'summaries',
      async () => {
        seen.push(trace.getActiveSpan()?.spanContext().traceId);
        return { kind: 'applied' };
      },
      (outcome) => outcome.kind,
    );
    expect(result).toEqual({ kind: 'applied' });
    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('process shop.Order');
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(seen).toEqual(['0af7651916cd43dd8448eb211c80319c']);
    expect(span.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.destination.partition.id': '2',
      'messaging.kafka.offset': 41,
      'messaging.message.id': 'evt-1',
      'outbox.consumer': 'summaries',
      'outbox.consume.outcome': 'applied',
    });
  });

  it('ends a failed delivery span with an error status', async () => {
    const message = { topic: 'Order', partition: 0, offset: '1', key: null, headers: {} };
    await expect(
      inConsumerSpan(message, 'c', async () => {
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    expect(spans.getFinishedSpans()[0].status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('trace context with OpenTelemetry installed but no SDK', () => {
  it('sends the event trace headers unchanged', async () => {
    const inner = new RecordingSender();
    const emitTime = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const original = message({ traceparent: emitTime });
    await instrumentKafkaSender(inner).send([{ topic: 'Order', messages: [original] }]);
    expect(inner.sent[0].messages[0]).toEqual(original);
  });

  it("writes an event's trace context through the application's propagator, as the no-op span carries it", async () => {
    // No tracer provider: the sender skips the no-op spans, but not what their context does.
    const traceIdHeader = {
      inject: (ctx: Context, carrier: Record<string, string>) => {
        const span = trace.getSpanContext(ctx);
        if (span) carrier['x-trace-id'] = span.traceId;
      },
      extract: (ctx: Context) => ctx,
      fields: () => ['x-trace-id'],
    };
    propagation.setGlobalPropagator(traceIdHeader);
    try {
      const inner = new RecordingSender();
      const emitTime = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const traced = message({ traceparent: emitTime, tracestate: 'a=1,  b=2' });
      const untraced = message({});
      await instrumentKafkaSender(inner).send([{ topic: 'Order', messages: [traced, untraced] }]);
      const [sentTraced, sentUntraced] = inner.sent[0].messages;
      expect(sentTraced.headers).toEqual({
        ...traced.headers,
        tracestate: 'a=1,b=2',
        'x-trace-id': '0af7651916cd43dd8448eb211c80319c',
      });
      expect(traced.headers).not.toHaveProperty('x-trace-id');
      expect(sentUntraced).toBe(untraced);
    } finally {
      propagation.disable();
    }
  });

  it('uses a tracer provider registered after the sender was made, from the next send on', async () => {
    const spans = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const inner = new RecordingSender();
    const sender = instrumentKafkaSender(inner);
    await sender.send([{ topic: 'Order', messages: [message({})] }]);
    expect(spans.getFinishedSpans()).toHaveLength(0);
    trace.setGlobalTracerProvider(provider);
    try {
      await sender.send([{ topic: 'Order', messages: [message({})] }]);
      expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(['send Order']);
      expect(inner.sent[1].messages[0].headers.traceparent).toMatch(/^00-[0-9a-f]{32}-/);
    } finally {
      await provider.shutdown();
      trace.disable();
    }
  });
});

describe('without @opentelemetry/api installed', () => {
  afterEach(() => jest.resetModules());

  it('imports nothing, stores no trace headers and sends messages unchanged', async () => {
    const factory = jest.fn(() => {
      throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), {
        code: 'MODULE_NOT_FOUND',
      });
    });
    await jest.isolateModulesAsync(async () => {
      jest.doMock('@opentelemetry/api', factory);
      // Loading the whole library must not touch the package.
      require('../../index');
      expect(factory).not.toHaveBeenCalled();

      const { fakeTransactionRunner: fakes } = require('../../testing/fakes/fake-connection');
      const { OutboxEmitter: Emitter } = require('../../events/outbox.emitter');
      const { resolveOutboxOptions: resolve } = require('../../options/outbox-options.validator');
      const {
        instrumentKafkaSender: traced,
      } = require('../../publisher/kafka/kafka-producer.telemetry');
      const { connection, runner, writer } = fakes();
      const outbox = new Emitter(runner, resolve({ relay: false }), writer);
      await runner.run(async () => outbox.emit(event));
      expect(connection.docs('outbox')[0].headers).toBeUndefined();
      const inner = new RecordingSender();
      expect(traced(inner)).toBe(inner);
      const { inConsumerSpan: inSpan } = require('./consumer-span');
      const message = { topic: 'Order', partition: 0, offset: '1', key: null, headers: {} };
      await expect(inSpan(message, 'c', async () => 'ran')).resolves.toBe('ran');
      expect(factory).toHaveBeenCalledTimes(1);
    });
  });
});
