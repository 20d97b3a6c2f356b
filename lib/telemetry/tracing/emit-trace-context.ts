import { openTelemetry } from './opentelemetry.loader';
import { TRACEPARENT, TRACESTATE, traceHeadersOf } from './w3c-trace-context';

/**
 * The headers to store with an event emitted now: the given ones, plus the active span's
 * `traceparent`/`tracestate` when OpenTelemetry is installed, a span is active, and the caller
 * did not set a `traceparent` or `tracestate` of its own (a user-given trace context always wins).
 */
export function withEmitTraceContext(
  headers: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (headers?.[TRACEPARENT] !== undefined || headers?.[TRACESTATE] !== undefined) return headers;
  const api = openTelemetry();
  if (!api) return headers;
  const trace = traceHeadersOf(api, api.context.active());
  if (!trace[TRACEPARENT]) return headers;
  return { ...headers, ...trace };
}
