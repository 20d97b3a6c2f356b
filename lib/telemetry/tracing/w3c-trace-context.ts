import type { Context } from '@opentelemetry/api';
import type { OpenTelemetryApi } from './opentelemetry.loader';

/** The W3C Trace Context header names (https://www.w3.org/TR/trace-context/). */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const TRACEPARENT_FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The context of a span whose `traceparent`/`tracestate` are in `headers`, on top of the root
 * context (never the caller's active one). The application's propagator reads them first (it
 * may know more formats); a plain W3C parse is the fallback when no propagator is registered.
 * Undefined when the headers carry no valid trace context.
 */
export function contextFromHeaders(
  api: OpenTelemetryApi,
  headers: Readonly<Record<string, string | undefined>> | undefined,
): Context | undefined {
  if (!headers) return undefined;
  const extracted = api.propagation.extract(api.ROOT_CONTEXT, headers);
  if (api.trace.getSpanContext(extracted)) return extracted;
  const match = TRACEPARENT_FORMAT.exec(headers[TRACEPARENT] ?? '');
  if (!match) return undefined;
  const spanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: parseInt(match[3], 16),
    isRemote: true,
    ...(headers[TRACESTATE] ? { traceState: api.createTraceState(headers[TRACESTATE]) } : {}),
  };
  if (!api.trace.isSpanContextValid(spanContext)) return undefined;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
}

/**
 * `traceparent` (and `tracestate`) of the span in `context`, W3C format, whatever propagator the
 * application registered. Empty when the context has no valid span.
 */
export function traceHeadersOf(api: OpenTelemetryApi, context: Context): Record<string, string> {
  const span = api.trace.getSpanContext(context);
  if (!span || !api.trace.isSpanContextValid(span)) return {};
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const headers: Record<string, string> = {
    [TRACEPARENT]: `00-${span.traceId}-${span.spanId}-${flags}`,
  };
  const state = span.traceState?.serialize();
  if (state) headers[TRACESTATE] = state;
  return headers;
}

/**
 * Writes the context's trace headers into `headers` (replacing the ones there): the
 * application's propagator first (B3, baggage...), and W3C `traceparent`/`tracestate` always.
 */
export function injectTraceHeaders(
  api: OpenTelemetryApi,
  context: Context,
  headers: Record<string, string>,
): void {
  delete headers[TRACEPARENT];
  delete headers[TRACESTATE];
  api.propagation.inject(context, headers);
  Object.assign(headers, traceHeadersOf(api, context));
}
