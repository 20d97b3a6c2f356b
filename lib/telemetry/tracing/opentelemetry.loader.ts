import type * as OpenTelemetryApiModule from '@opentelemetry/api';

export type OpenTelemetryApi = typeof OpenTelemetryApiModule;

let loaded: OpenTelemetryApi | null | undefined;

/**
 * `@opentelemetry/api` when the application has it installed (an optional peer dependency),
 * else undefined. The one place the library loads it: lazily, on first use, once. Without the
 * package nothing is imported and tracing and OTel metrics are off; with it but without an SDK,
 * its calls are no-ops.
 */
export function openTelemetry(): OpenTelemetryApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = require('@opentelemetry/api') as OpenTelemetryApi;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** Name and version of the tracer and meter (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = { name: 'nestjs-outbox', version: '0.1.0' } as const;
