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

/** `tenants` with `relay.partitions` > 1: not supported yet. */
export class OutboxTenantsPartitionsError extends Error {
  override readonly name = 'OutboxTenantsPartitionsError';

  constructor(partitions: number) {
    super(
      `The tenants option needs relay.partitions: 1 (got ${partitions}); one relay instance publishes for every tenant database.`,
    );
  }
}

/** The node deps that make every lease term a `TenantsTerm` over `ports`. */
export function tenantTermsOver(ports: TenantPorts): Pick<RelayNodeDeps, 'terms'> {
  return {
    terms: (options, deps, lease, fencing, ended) =>
      new TenantsTerm(options, { ...deps, tenants: ports }, lease, fencing, ended),
  };
}

/**
 * The node deps of a relay with the `tenants` option over `ports` (MongoDB's, or the relay
 * simulation's): every lease term a `TenantsTerm`; `relay.partitions` must be 1.
 */
export function tenantsTermsFor(
  relay: ResolvedRelayOptions,
  ports: TenantPorts,
): Pick<RelayNodeDeps, 'terms'> {
  if (relay.partitions !== 1) throw new OutboxTenantsPartitionsError(relay.partitions);
  return tenantTermsOver(ports);
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
  if (relay.partitions !== 1) throw new OutboxTenantsPartitionsError(relay.partitions);
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
  return tenantsTermsFor(relay, ports);
}
