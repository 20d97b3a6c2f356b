import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (s1) Never before due: no append to Kafka of a scheduled event (one stored with
 * `availableAt`, its own or raised by the write side's order rule) happens before its
 * `availableAt` by the database server's clock (virtual time is the server's). Every append
 * counts, first or repeated, acknowledged or ambiguous: a message on the topic is published.
 */
export class NotBeforeDueInvariant implements InvariantChecker {
  readonly id = 's1';
  readonly name = 'scheduled: never before due';

  finish(world: SimWorld): InvariantResult {
    const { history } = world;
    const violations: string[] = [];
    const checked = new Set<string>();
    for (const append of history.appends) {
      const commit = history.commits.get(append.eventId);
      if (commit?.availableAt === undefined) continue;
      checked.add(append.eventId);
      if (append.at < commit.availableAt) {
        violations.push(
          `${append.eventId} (${commit.aggregate}${commit.inherited ? ', due time raised by the order rule' : ''}) ` +
            `appended to ${append.topic}/${append.partition} at ${append.at} by ${append.node}, ` +
            `${commit.availableAt - append.at} ms before it was due (${commit.availableAt})`,
        );
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked: checked.size,
      violations: capped(violations),
    };
  }
}
