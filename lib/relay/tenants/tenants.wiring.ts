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
      const scoped = deps.partition
        ? ports.forPartition(deps.partition.layout, deps.partition.partition)
        : ports;
      return new TenantsTerm(options, { ...deps, tenants: scoped }, lease, fencing, ended);
    },
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
