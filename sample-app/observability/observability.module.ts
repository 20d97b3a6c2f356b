import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { ObservabilityController, SAMPLE_TELEMETRY } from './observability.controller';
import { RequestSpanInterceptor } from './request-span.interceptor';
import { startTelemetry } from './telemetry';

/** GET /health (terminus + OutboxHealthIndicator), GET /metrics (Prometheus), a span per request. */
@Module({
  imports: [TerminusModule],
  controllers: [ObservabilityController],
  providers: [
    { provide: SAMPLE_TELEMETRY, useFactory: startTelemetry },
    { provide: APP_INTERCEPTOR, useClass: RequestSpanInterceptor },
  ],
})
export class ObservabilityModule {}
