import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (k) Published means stored: every write that marked an event published (`markPublished`, as
 * it landed on the server) came after the event had a record in the Kafka cluster (an append,
 * `history.appends`). A send the broker answered as a duplicate of another batch (an idempotent
 * producer whose sequence numbers went back after an ambiguous failure) appends nothing: an
 * event it carried is marked published, and is on Kafka only if an earlier send stored it.
 * (a) sees the same loss later and less precisely (never published); this says which mark.
 */
export class PublishedStoredInvariant implements InvariantChecker {
  readonly id = 'k';
  readonly name = 'marked published only if on Kafka';

  finish(world: SimWorld): InvariantResult {
    const { history } = world;
    const first = history.firstAppends();
    const commitOf = new Map([...history.commits.values()].map((commit) => [commit.docId, commit]));
    const violations: string[] = [];
    let checked = 0;
    for (const write of history.outboxWrites) {
      if (write.name !== 'markPublished') continue;
      checked++;
      const commit = commitOf.get(write.docId);
      const eventId = commit?.eventId ?? write.docId;
      const append = first.get(eventId);
      if (append && append.at <= write.at) continue;
      violations.push(
        `${eventId} (${commit?.aggregate ?? '?'}) marked published at ${write.at} by ${write.node} (op ${write.opId}), ` +
          (append
            ? `but first appended to Kafka at ${append.at}`
            : 'but never appended to Kafka (no record in the cluster)'),
      );
    }
    return { id: this.id, name: this.name, checked, violations: capped(violations) };
  }
}
