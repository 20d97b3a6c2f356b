import type { mongo } from 'mongoose';
import type { OutboxCollections } from '../../common/outbox-storage.options';
import type { ResolvedTenantsOptions } from '../../tenants/tenants.resolved';
import type { MongoOutboxRelayStore } from '../mongo/mongo-outbox-relay.store';
import type { RelayClock } from '../ports/relay-clock';
import { nestRelayLoggers } from '../ports/relay-logger';
import type { RelayNodeDeps } from '../relay-node.deps';
import type { ResolvedRelayOptions } from '../relay.options';
import { MongoTenantPorts } from './mongo-tenant.ports';
import type { TenantPorts } from './tenant.ports';
import { TenantsTerm } from './tenants.term';

/**
 * The node deps of a relay with the `tenants` option over `ports` (MongoDB's, or the relay
 * simulation's), any `relay.partitions`: every lease term a `TenantsTerm`, the single lease's
 * term over every database's whole outbox, a partition's term (`RelayNodeDeps.partition`, set
 * by `PartitionRelay`) over every database's events of that partition's slots.
 */
export function tenantTermsOver(ports: TenantPorts): Pick<RelayNodeDeps, 'terms'> {
  return {
    terms: (options, deps, lease, fencing, ended) => {
      if (!deps.partition)
        return new TenantsTerm(options, { ...deps, tenants: ports }, lease, fencing, ended);
      const { layout, partition } = deps.partition;
      const tenants = ports.forPartition(layout, partition);
      const part = partOf(options, layout.partitions);
      return new TenantsTerm(part, { ...deps, tenants }, lease, fencing, ended);
    },
  };
}

/**
 * A partition's part of the instance's in-flight bounds, which its tenant databases share
 * (`TenantInFlight`): an equal part of `partitions` (at least one batch, as the options check
 * `maxInFlight >= partitions x batchSize`), so the terms of every partition an instance holds
 * stay within `maxInFlight` and `maxInFlightBytes` together (beside a page per database each).
 */
function partOf(options: ResolvedRelayOptions, partitions: number): ResolvedRelayOptions {
  return {
    ...options,
    maxInFlight: Math.max(options.batchSize, Math.floor(options.maxInFlight / partitions)),
    maxInFlightBytes: Math.max(
      options.maxBatchBytes,
      Math.floor(options.maxInFlightBytes / partitions),
    ),
  };
}

/** The MongoDB tenant ports of the app connection's client, as the terms' ports. */
export function tenantsTerms(
  relay: ResolvedRelayOptions,
  tenants: ResolvedTenantsOptions,
  wiring: {
    db: mongo.Db;
    collections: Required<OutboxCollections>;
    clock: RelayClock;
    prepare?: (outbox: MongoOutboxRelayStore) => Promise<void>;
  },
): Pick<RelayNodeDeps, 'terms'> {
  const ports = new MongoTenantPorts({
    client: wiring.db.client,
    appDb: wiring.db,
    collections: wiring.collections,
    tenants,
    relay,
    clock: wiring.clock,
    random: Math.random,
    logger: nestRelayLoggers('RelayTenants'),
    prepare: wiring.prepare,
  });
  return tenantTermsOver(ports);
}
