import type { ResumeToken } from '../../../lib/relay/ports/change-source';
import type {
  LeaseGrant,
  RelayStateStore,
  StoredCheckpoint,
} from '../../../lib/relay/ports/relay-state.store';
import type { CheckpointFact, SimHistory } from '../world/sim.history';
import type { SimDatabase } from './sim-database';
import type { SimMongoConnection } from './sim-mongo.connection';
import { asSimToken } from './sim-token';

/** Called when a checkpoint write lands (the checkpoint-safety invariant looks at the world then). */
export type CheckpointListener = (fact: CheckpointFact) => void;

/** `RelayStateStore` over the simulated database: lease on the server's clock, fenced checkpoint. */
export class SimStateStore implements RelayStateStore {
  constructor(
    private readonly connection: SimMongoConnection,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
    private readonly node: string,
    private readonly onCheckpoint: CheckpointListener,
    /** A partition's scope (undefined: the single relay lease and checkpoint). */
    private readonly scope?: string,
  ) {}

  serverTime(): Promise<Date> {
    return this.connection.op({ name: 'serverTime', write: false }, () => this.db.serverDate());
  }

  acquireLease(owner: string, serverNow: Date, expiresAt: Date): Promise<LeaseGrant | undefined> {
    return this.connection.op(
      { name: 'acquireLease', write: true, leaseOp: true, leaseScope: this.scope },
      (fact) => {
        const before = this.db.scopeState(this.scope).lease;
        const grant = this.db.acquireLease(owner, serverNow, expiresAt, this.scope);
        if (grant) {
          if (
            before &&
            before.owner !== owner &&
            before.expiresAt.getTime() > this.db.serverDate().getTime()
          ) {
            this.history.leaseOverlaps.push(
              `${this.db.now}: ${owner} took the lease${this.scope ? ` of ${this.scope}` : ''} (fencing ${grant.fencing}) while ${before.owner}'s ` +
                `(fencing ${before.fencing}) was valid until ${before.expiresAt.toISOString()} by the server's clock ` +
                `(serverNow passed: ${serverNow.toISOString()}, server time ${this.db.serverDate().toISOString()})`,
            );
          }
          this.history.leases.push({
            at: this.db.now,
            owner,
            node: this.node,
            fencing: grant.fencing,
            kind: 'acquire',
            expiresAt: grant.expiresAt.getTime(),
            scope: this.scope,
            opId: fact.opId,
          });
          this.history.note(
            `lease${this.scope ? ` ${this.scope}` : ''} acquired by ${owner} (fencing ${grant.fencing}) until ${grant.expiresAt.toISOString()}`,
          );
        }
        return grant;
      },
    );
  }

  renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean> {
    return this.connection.op(
      { name: 'renewLease', write: true, leaseOp: true, leaseScope: this.scope },
      (fact) => {
        const renewed = this.db.renewLease(owner, fencing, expiresAt, this.scope);
        if (renewed) {
          this.history.leases.push({
            at: this.db.now,
            owner,
            node: this.node,
            fencing,
            kind: 'renew',
            expiresAt: expiresAt.getTime(),
            scope: this.scope,
            opId: fact.opId,
          });
          this.history.note(
            `lease${this.scope ? ` ${this.scope}` : ''} renewed by ${owner} (fencing ${fencing}) until ${expiresAt.toISOString()}`,
          );
        }
        return renewed;
      },
    );
  }

  releaseLease(owner: string, fencing: number): Promise<void> {
    return this.connection.op(
      { name: 'releaseLease', write: true, leaseOp: true, leaseScope: this.scope },
      () => {
        if (this.db.releaseLease(owner, fencing, this.scope)) {
          this.history.leases.push({
            at: this.db.now,
            owner,
            node: this.node,
            fencing,
            kind: 'release',
            expiresAt: 0,
            scope: this.scope,
          });
          this.history.note(
            `lease${this.scope ? ` ${this.scope}` : ''} released by ${owner} (fencing ${fencing})`,
          );
        }
      },
    );
  }

  claimCheckpoint(fencing: number): Promise<StoredCheckpoint | undefined> {
    return this.connection.op(
      { name: 'claimCheckpoint', write: true, fence: fencing, leaseScope: this.scope },
      () => {
        const stored = this.db.claimCheckpoint(fencing, this.scope);
        this.record({ kind: 'claim', fencing, landed: stored !== undefined });
        return stored === undefined ? undefined : { ...stored };
      },
    );
  }

  saveCheckpoint(token: ResumeToken, fencing: number, at: Date): Promise<boolean> {
    return this.connection.op(
      { name: 'saveCheckpoint', write: true, fence: fencing, leaseScope: this.scope },
      () => {
        const simToken = asSimToken(token);
        const landed = this.db.writeCheckpoint(simToken, fencing, at, this.scope);
        this.record({ kind: 'save', fencing, landed, token: simToken });
        return landed;
      },
    );
  }

  clearCheckpoint(fencing: number, at: Date): Promise<boolean> {
    return this.connection.op(
      { name: 'clearCheckpoint', write: true, fence: fencing, leaseScope: this.scope },
      () => {
        const landed = this.db.writeCheckpoint(undefined, fencing, at, this.scope);
        this.record({ kind: 'clear', fencing, landed });
        return landed;
      },
    );
  }

  private record(fact: Omit<CheckpointFact, 'at' | 'node'>): void {
    const full: CheckpointFact = { at: this.db.now, node: this.node, ...fact };
    if (this.scope !== undefined) full.scope = this.scope;
    this.history.checkpoints.push(full);
    this.history.note(
      `checkpoint${this.scope ? ` ${this.scope}` : ''} ${full.kind} by ${this.node} (fencing ${full.fencing}) ${full.landed ? 'landed' : 'refused'}${full.token ? ` ${JSON.stringify(full.token)}` : ''}`,
    );
    if (full.landed) this.onCheckpoint(full);
  }
}
