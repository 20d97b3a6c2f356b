import { SIM_EPOCH_MS } from '../process/sim-process';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';
import { LeaseView } from './lease-view';

/** Store operations that are relay writes under a lease (lease operations themselves are not). */
const FENCED_WRITES = new Set([
  'markPublished',
  'markHeld',
  'recordFailure',
  'markDead',
  'removeDead',
  'copyToDeadLetters',
  'claimCheckpoint',
  'saveCheckpoint',
  'clearCheckpoint',
]);

/**
 * (g) Fencing: no lease is taken while another owner's is valid by the server's clock; no
 * relay write lands on an outbox document a newer fencing number already wrote (and every
 * outbox write carries a fence); no checkpoint write of an older fencing lands after a newer
 * one claimed it; no node issues a write after its lease expired by the server's clock
 * (writes issued before may land late: counted). Every Kafka send, as the simulated broker's
 * sender port saw it leave the relay (every relay, single or partitioned), carries only events
 * whose lease the sending incarnation held at that virtual time by the server's record of
 * leases (`LeaseView`: the single lease, or the event's partition lease in the layout then):
 * a send after that lease expired, was released or was taken over is a violation whether or
 * not another relay holds it now. kafkajs' own retries of a request that left in time are the
 * same send. Nothing here reads a relay's status.
 */
export class FencingInvariant implements InvariantChecker {
  readonly id = 'g';
  readonly name = 'fencing';

  finish(world: SimWorld): InvariantResult {
    const history = world.history;
    const violations: string[] = [...history.leaseOverlaps];
    let checked = 0;
    const leases = new LeaseView(history);
    let sends = 0;
    for (const call of history.sendCalls) {
      checked++;
      sends++;
      const unleased = leases.unleasedEvents(call);
      if (unleased.length === 0) continue;
      const { eventId, scope, holder } = unleased[0];
      violations.push(
        `${call.issuedAt}: ${call.owner} sent produce#${call.callId} with ${unleased.length} event(s) (${eventId}...) ` +
          `without ${scope}'s lease by the server's clock (${holder ? `${holder.owner} held it` : 'nobody held it'})`,
      );
    }
    for (const write of history.outboxWrites) {
      checked++;
      if (write.fence === null) {
        violations.push(
          `${write.at}: ${write.node} wrote ${write.name} on ${write.docId} without a fence`,
        );
      } else if (write.stampBefore !== undefined && write.fence < write.stampBefore) {
        violations.push(
          `${write.at}: ${write.node}'s ${write.name} (fence ${write.fence}) landed on ${write.docId}, ` +
            `which fencing ${write.stampBefore} had written`,
        );
      }
    }
    // Per checkpoint (the single one, or each partition's).
    const claimedBy = new Map<string, number>();
    for (const fact of history.checkpoints) {
      if (!fact.landed) continue;
      checked++;
      const scope = fact.scope ?? '';
      const claimed = claimedBy.get(scope) ?? 0;
      if (fact.fencing < claimed) {
        violations.push(
          `${fact.at}: ${fact.node}'s checkpoint${fact.scope ? ` ${fact.scope}` : ''} ${fact.kind} (fencing ${fact.fencing}) landed after fencing ${claimed} claimed it`,
        );
      }
      claimedBy.set(scope, Math.max(claimed, fact.fencing));
    }
    let late = 0;
    for (const op of history.storeOps) {
      if (!FENCED_WRITES.has(op.name)) continue;
      checked++;
      if (op.issuedWithoutLease) {
        violations.push(
          `${op.issuedAt}: ${op.node} (${op.owner}) issued ${op.name}#${op.opId}${op.fence !== undefined ? ` (fence ${op.fence})` : ''} ` +
            `without a valid lease by the server's clock`,
        );
      } else if (
        op.appliedAt !== undefined &&
        this.expiredAt(world, op.owner, op.appliedAt, op.scope)
      ) {
        late++;
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked,
      violations: capped(violations),
      counts: {
        'writes landed after the lease expired': late,
        'sends judged': sends,
      },
    };
  }

  /** Whether `owner`'s lease (of `scope`) had ended (expired or taken over) by `at`. */
  private expiredAt(world: SimWorld, owner: string, at: number, scope?: string): boolean {
    let holder: { owner: string; expiresAt: number } | undefined;
    for (const lease of world.history.leases) {
      if (lease.at > at) break;
      if (lease.scope !== scope) continue;
      if (lease.kind === 'acquire') holder = { owner: lease.owner, expiresAt: lease.expiresAt };
      else if (holder && lease.owner === holder.owner) holder.expiresAt = lease.expiresAt;
    }
    return !holder || holder.owner !== owner || holder.expiresAt - SIM_EPOCH_MS <= at;
  }
}
