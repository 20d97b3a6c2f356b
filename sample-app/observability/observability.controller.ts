import { Controller, Get, Inject, Res } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import type { ServerResponse } from 'node:http';
import { OutboxHealthIndicator } from '../../lib';
import type { SampleTelemetry } from './telemetry';

export const SAMPLE_TELEMETRY = 'SAMPLE_TELEMETRY';

@Controller()
export class ObservabilityController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly outbox: OutboxHealthIndicator,
    @Inject(SAMPLE_TELEMETRY) private readonly telemetry: SampleTelemetry,
  ) {}

  /** Readiness: 503 when the outbox lags more than a minute or the relay is about to fall off the oplog. */
  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.outbox.check('outbox', { maxLagMs: 60_000 })]);
  }

  /** Prometheus scrape endpoint (the OpenTelemetry Prometheus exporter's text format). */
  @Get('metrics')
  metrics(@Res() response: ServerResponse): void {
    this.telemetry.prometheus.getMetricsRequestHandler(undefined as never, response);
  }
}
