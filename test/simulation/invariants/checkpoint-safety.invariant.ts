import type { CheckpointFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { asSimToken } from '../mongo/sim-token';
import { rangeOfScope } from '../mongo/sim-database';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (c) Checkpoint safety: when a checkpoint write lands, every event at or before its token is
 * on Kafka, marked dead, or pending in the database with `nextAttemptAt` set (a durable
 * marker the next leader reads before publishing newer events of its aggregate), or scheduled
 * (pending with `availableAt`: the due reader finds it in the collection, whoever leads), or
 * cancelled. Also: no event is marked published that never reached Kafka.
 */
export class CheckpointSafetyInvariant implements InvariantChecker {
  readonly id = 'c';
  readonly name = 'checkpoint safety';
  private checked = 0;
  private readonly violations: string[] = [];

  onCheckpoint(world: SimWorld, fact: CheckpointFact): void {
    if (fact.kind !== 'save' || fact.token === undefined) return;
    this.checked++;
    const token = asSimToken(fact.token);
    const appended = world.appendedIds();
    const unsafe: string[] = [];
    // A partition's checkpoint covers the events of its aggregates: those whose aggregate's
    // slot lies in its range, also when they were written without a slot (its stream gets them).
    const range = fact.scope ? rangeOfScope(fact.scope) : undefined;
    for (const doc of world.db.eventsUpTo(token)) {
      if (range) {
        const slot = world.history.commits.get(doc.eventId)?.aggregateSlot;
        if (slot === undefined || slot < range.from || slot >= range.to) continue;
      }
      if (appended.has(doc.eventId) || world.history.deadMarked.has(doc.eventId)) continue;
      if (doc.status === 'pending' && (doc.nextAttemptAt || doc.availableAt)) continue;
      if (doc.status === 'cancelled') continue;
      unsafe.push(`${doc.eventId} (${doc.aggregateType}/${doc.aggregateId}, ${doc.status})`);
    }
    if (unsafe.length > 0) {
      this.violations.push(
        `${fact.at}: ${fact.node} (fencing ${fact.fencing}) saved checkpoint ${JSON.stringify(token)} ` +
          `past ${unsafe.length} event(s) neither on Kafka, dead, nor durably pending: ${unsafe.slice(0, 5).join(', ')}`,
      );
    }
  }

  finish(world: SimWorld): InvariantResult {
    const appended = world.appendedIds();
    const violations = [...this.violations];
    for (const commit of world.history.commits.values()) {
      const doc = world.db.inspect(commit.eventId);
      if (doc?.status === 'published' && !appended.has(commit.eventId)) {
        violations.push(`${commit.eventId} is marked published but never reached Kafka`);
      }
    }
    return { id: this.id, name: this.name, checked: this.checked, violations: capped(violations) };
  }
}
