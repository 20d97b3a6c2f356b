import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** The OpenTelemetry SDK of the sample: traces (printed with SAMPLE_TRACES=console) and metrics for Prometheus. */
export interface SampleTelemetry {
  /** Serves the Prometheus text format; mounted at GET /metrics by `MetricsController`. */
  prometheus: PrometheusExporter;
}

let started: SampleTelemetry | undefined;

/**
 * Sets up the SDK once per process, before Nest starts, as an application would (in production
 * you would rather use `@opentelemetry/sdk-node` with an OTLP exporter and HTTP instrumentation).
 * nestjs-outbox needs nothing else: it finds `@opentelemetry/api` and uses what is registered.
 */
export function startTelemetry(): SampleTelemetry {
  if (started) return started;
  // Metrics are pulled by Prometheus through GET /metrics of the app (no server of the exporter's own).
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [prometheus] }));
  const spanProcessors =
    process.env.SAMPLE_TRACES === 'console'
      ? [new SimpleSpanProcessor(new ConsoleSpanExporter())]
      : [];
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  started = { prometheus };
  return started;
}
