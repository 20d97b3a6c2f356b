import { aggregateKey, compareAggregates } from '../../documents/outbox-event.document';
import type { AggregateRef } from '../../documents/outbox-event.document';
import type { DueAggregate } from '../ports/outbox-relay.store';

/** A due event as the due read sees it: the key of its run (its due time and aggregate). */
export interface DueKey extends AggregateRef {
  availableAt: Date;
}

/** One read of the due index: due events after every event of `after`'s run, at most `batch`. */
export interface DueRead {
  after?: DueKey;
  batch: number;
}

/** Runs visited in one call at most, per aggregate asked for (a busy aggregate may have several). */
const RUNS_PER_AGGREGATE = 4;

/** `DUE_RUN_ORDER` without `_id`, in memory: by due time, then aggregate (binary string order). */
export function compareDueRuns(a: DueKey, b: DueKey): number {
  return a.availableAt.getTime() - b.availableAt.getTime() || compareAggregates(a, b);
}

/**
 * The aggregates with a due event, each once, by their earliest due event, from reads of the due
 * index in `DUE_RUN_ORDER` (`availableAt`, aggregate, `_id`). A run is the events of one aggregate
 * due at one time (events that inherit their aggregate's due time make long ones): each read
 * starts after the last run the previous one reached, so a run is one index seek however many
 * events it holds, and a read that met only long runs is followed by smaller ones (twice the runs
 * it met). Events read per call: at most `limit` + 2 per run visited; runs visited: at most
 * `RUNS_PER_AGGREGATE * limit`. The cost of a call follows the aggregates it answers, not the due
 * backlog. The production store and the simulated one both page through it:
 * `while (!c.done) c.take(await read(c.next()))`.
 */
export class DueAggregatesCollector {
  private readonly found = new Map<string, DueAggregate>();
  private after?: DueKey;
  private batch: number;
  private runs = 0;
  private ended = false;

  constructor(private readonly limit: number) {
    this.batch = Math.max(1, limit);
  }

  get done(): boolean {
    return (
      this.ended || this.found.size >= this.limit || this.runs >= this.limit * RUNS_PER_AGGREGATE
    );
  }

  next(): DueRead {
    return { after: this.after, batch: this.batch };
  }

  /** The events the read `next()` asked for returned, in `DUE_RUN_ORDER`. */
  take(events: readonly DueKey[]): void {
    if (events.length < this.batch) this.ended = true;
    let runsRead = 0;
    let last: DueKey | undefined;
    for (const event of events) {
      if (last && compareDueRuns(last, event) === 0) continue;
      last = event;
      runsRead++;
      this.runs++;
      const key = aggregateKey(event);
      if (this.found.has(key) || this.found.size >= this.limit) continue;
      const { aggregateType, aggregateId, availableAt } = event;
      this.found.set(key, { aggregateType, aggregateId, availableAt });
    }
    if (last) this.after = last;
    this.batch = Math.max(1, Math.min(this.limit - this.found.size, runsRead * 2));
  }

  result(): DueAggregate[] {
    return [...this.found.values()];
  }
}

/**
 * The collector's reads over due events held in memory (in `DUE_RUN_ORDER`): the in-memory and
 * simulated stores answer as the production store reads.
 */
export function dueAggregatesOf(due: readonly DueKey[], limit: number): DueAggregate[] {
  const collector = new DueAggregatesCollector(limit);
  while (!collector.done) {
    const { after, batch } = collector.next();
    const start = after ? due.findIndex((event) => compareDueRuns(event, after) > 0) : 0;
    collector.take(start < 0 ? [] : due.slice(start, start + batch));
  }
  return collector.result();
}
