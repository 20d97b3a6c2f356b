import type { CommitFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (b) Order: per aggregate, the first publication of each event follows commit order (the
 * oplog's, which is also `sequence` order with `aggregateSequence`); events marked dead are
 * left out (later events of their aggregate go out without them), and so are cancelled ones
 * (never published). All of an aggregate's messages go to one partition of its topic (the
 * consumer's order is the partition's), or to one more each time partitions were added to it.
 *
 * Across delays (issue 22, (s4)): the rule is the same, judged on every event, scheduled or not
 * (a scheduled event and the later events of its aggregate, which the write side schedules
 * behind it, go out in commit order), with one exemption the API gives: an event emitted with
 * `waitForScheduled: false` is not ordered after the earlier scheduled events of its aggregate
 * (it must still follow the earlier events that are not scheduled).
 *
 * Two writers on one aggregate without `aggregateSequence` (`sharedAggregates`, issue 31): the
 * relay reads an aggregate in `_id` order there, which across processes holds only to the second
 * (docs/guarantees.md), so what is judged is what the docs promise: each writer's events in its
 * commit order, and an event that waits after every earlier scheduled event of its aggregate,
 * whichever writer committed it (the write side gives it an `_id` after theirs).
 */
export class OrderInvariant implements InvariantChecker {
  readonly id = 'b';
  readonly name = 'per-aggregate order';

  finish(world: SimWorld): InvariantResult {
    const history = world.history;
    const firstIndex = new Map<string, number>();
    history.appends.forEach((append, index) => {
      if (!firstIndex.has(append.eventId)) firstIndex.set(append.eventId, index);
    });
    const byAggregate = new Map<string, CommitFact[]>();
    for (const commit of history.committed()) {
      const list = byAggregate.get(commit.aggregate);
      if (list) list.push(commit);
      else byAggregate.set(commit.aggregate, [commit]);
    }
    const violations: string[] = [];
    const { sharedAggregates, aggregateSequence } = world.schedule.world;
    const byWriter = sharedAggregates === true && !aggregateSequence;
    let checked = 0;
    let mixed = 0;
    let scheduled = 0;
    let exempt = 0;
    for (const [aggregate, commits] of byAggregate) {
      if (new Set(commits.map((commit) => commit.slot === undefined)).size > 1) mixed++;
      commits.sort((a, b) => a.pos - b.pos || a.index - b.index);
      // Per writer (one, unless `byWriter`): the latest first publication among its earlier
      // events, and among those not scheduled (what an exempt event must follow); and among
      // every writer's earlier scheduled events (what an event that waits must follow).
      type Published = { commit: CommitFact; index: number };
      const latest = new Map<number, Published>();
      const latestPlain = new Map<number, Published>();
      let latestScheduled: Published | undefined;
      const later = (a: Published | undefined, b: Published | undefined) =>
        !a || (b && b.index > a.index) ? b : a;
      for (const commit of commits) {
        if (history.deadMarked.has(commit.eventId)) continue;
        const index = firstIndex.get(commit.eventId);
        if (index === undefined) continue;
        checked++;
        if (commit.availableAt !== undefined) scheduled++;
        if (commit.exempt) exempt++;
        const writer = byWriter ? (commit.writer ?? 0) : 0;
        const previous = commit.exempt
          ? latestPlain.get(writer)
          : later(latest.get(writer), latestScheduled);
        if (previous && index < previous.index) {
          const mine = history.appends[index];
          const theirs = history.appends[previous.index];
          violations.push(
            `${aggregate}: ${commit.eventId} (seq ${commit.sequence ?? '-'}, commit ${commit.pos}.${commit.index}) ` +
              `first published at ${mine.at} by ${mine.node}, before the earlier-committed ` +
              `${previous.commit.eventId} (seq ${previous.commit.sequence ?? '-'}, commit ${previous.commit.pos}.${previous.commit.index}) ` +
              `first published at ${theirs.at} by ${theirs.node}`,
          );
        }
        const published = { commit, index };
        latest.set(writer, later(latest.get(writer), published) as Published);
        if (commit.availableAt === undefined)
          latestPlain.set(writer, later(latestPlain.get(writer), published) as Published);
        else latestScheduled = later(latestScheduled, published);
      }
      const ids = new Set(commits.map((commit) => commit.eventId));
      const places = new Set(
        history.appends
          .filter((append) => ids.has(append.eventId))
          .map((append) => `${append.topic}/${append.partition}`),
      );
      // Kafka maps a key to a partition by the topic's count: each time partitions were added,
      // an aggregate may move once (the events before the move are out first, checked above).
      const topic = commits[0]?.topic;
      const moves = history.partitionsAdded.filter((added) => added.topic === topic).length;
      if (places.size > 1 + moves) {
        violations.push(
          `${aggregate}: messages went to several partitions (${[...places].join(', ')})`,
        );
      }
      const expected = commits[0]?.topic;
      for (const place of places) {
        if (expected && !place.startsWith(`${expected}/`))
          violations.push(`${aggregate}: messages went to ${place}, expected topic ${expected}`);
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked,
      violations: capped(violations),
      counts: {
        // Pre-slot and current writers sharing aggregates (partitioned rolling deploys).
        ...(mixed > 0 ? { 'aggregates written both with and without a slot': mixed } : {}),
        'scheduled events checked (s4)': scheduled,
        'waitForScheduled: false events checked': exempt,
        ...(byWriter ? { 'aggregates shared by writers without aggregateSequence': 1 } : {}),
      },
    };
  }
}
