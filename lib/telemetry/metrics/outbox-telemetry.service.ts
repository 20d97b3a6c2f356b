import { Inject, Injectable, Optional } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { OUTBOX_RELAY_OPTIONS } from '../../common/outbox.constants';
import { OutboxConsumerMetrics } from '../../consumer/flow/consumer.metrics';
import type { ResolvedRelayOptions } from '../../relay/relay.options';
import { OutboxRelay } from '../../relay/outbox.relay';
import { OutboxRelayMetrics } from '../../relay/relay.metrics';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../../tenants/tenants.resolved';
import { openTelemetry } from '../tracing/opentelemetry.loader';
import { registerConsumerInstruments } from './consumer-metrics.instruments';
import { registerRelayInstruments } from './relay-metrics.instruments';

/**
 * Exposes the outbox's metrics (the relay's, when it has one, and the `@IdempotentHandler`
 * consumers') through the OpenTelemetry metrics API when `@opentelemetry/api` is installed (your
 * SDK's readers and exporters, e.g. Prometheus, then see them). Without the package it does
 * nothing. `OutboxRelayMetrics.snapshot()` and `OutboxConsumerMetrics.snapshot()` work either way.
 */
@Injectable()
export class OutboxTelemetry implements OnModuleInit, OnModuleDestroy {
  private readonly unregister: Array<() => void> = [];

  constructor(
    @Inject(OUTBOX_RELAY_OPTIONS) private readonly relayOptions: ResolvedRelayOptions | false,
    private readonly relayMetrics: OutboxRelayMetrics,
    private readonly relay: OutboxRelay,
    private readonly consumerMetrics: OutboxConsumerMetrics,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting = false,
  ) {}

  /** Whether the instruments are registered (OpenTelemetry installed). */
  get enabled(): boolean {
    return this.unregister.length > 0;
  }

  onModuleInit(): void {
    const api = openTelemetry();
    if (!api) return;
    this.unregister.push(registerConsumerInstruments(api, this.consumerMetrics));
    if (this.relayOptions === false) return;
    this.unregister.push(
      registerRelayInstruments(api, {
        metrics: this.relayMetrics,
        status: () => this.relay.status(),
        relayName: this.relayOptions.name,
        tenantLimit: this.tenants ? this.tenants.metricsTenantLimit : undefined,
      }),
    );
  }

  onModuleDestroy(): void {
    for (const unregister of this.unregister.splice(0)) unregister();
  }
}
