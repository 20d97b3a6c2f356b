import type { FactoryProvider, Provider } from '@nestjs/common';
import {
  OUTBOX_CONSUMER_OPTIONS,
  OUTBOX_EVENTS_OPTIONS,
  OUTBOX_RELAY_OPTIONS,
  OUTBOX_RESOLVED_OPTIONS,
  OUTBOX_STORAGE_OPTIONS,
} from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import type { ResolvedConsumerOptions } from '../consumer/consumer.options';
import type { OutboxEventsOptions } from '../events/outbox-events.options';
import type { ResolvedRelayOptions } from '../relay/relay.options';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';

/** Options after defaults were merged and validation passed; injected as `OUTBOX_RESOLVED_OPTIONS`. */
export interface ResolvedOutboxOptions extends OutboxStorageOptions, OutboxEventsOptions {
  relay: ResolvedRelayOptions | false;
  consumer: ResolvedConsumerOptions;
  /** `false` without the `tenants` option. */
  tenants: TenantsSetting;
}

/**
 * The resolved options (made by `resolve`, e.g. from the module's raw options) and one provider
 * per feature's slice: storage, events, relay (`false` without one), consumer, tenants (`false` without). Each feature
 * injects its slice, so none depends on this folder.
 */
export function resolvedOptionProviders(
  resolve: Omit<FactoryProvider<ResolvedOutboxOptions>, 'provide'>,
): Provider[] {
  const slice = <T>(provide: symbol, pick: (options: ResolvedOutboxOptions) => T): Provider => ({
    provide,
    useFactory: pick,
    inject: [OUTBOX_RESOLVED_OPTIONS],
  });
  return [
    { provide: OUTBOX_RESOLVED_OPTIONS, ...resolve },
    slice<OutboxStorageOptions>(OUTBOX_STORAGE_OPTIONS, (o) => ({
      ...(o.connectionName !== undefined ? { connectionName: o.connectionName } : {}),
      collections: o.collections,
      createIndexes: o.createIndexes,
    })),
    slice<OutboxEventsOptions>(OUTBOX_EVENTS_OPTIONS, (o) => ({
      maxPayloadBytes: o.maxPayloadBytes,
      allowBigInt: o.allowBigInt,
      aggregateSequence: o.aggregateSequence,
      scheduledEvents: o.scheduledEvents,
    })),
    slice(OUTBOX_RELAY_OPTIONS, (o) => o.relay),
    slice(OUTBOX_CONSUMER_OPTIONS, (o) => o.consumer),
    slice(OUTBOX_TENANTS_OPTIONS, (o) => o.tenants),
  ];
}
