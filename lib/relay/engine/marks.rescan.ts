import { describeError } from '../../common/errors/describe-error';
import type { AggregateRef, OutboxRelayStore } from '../ports/outbox-relay.store';
import { forEachRetryingAggregate } from '../recovery/retrying-aggregates.pages';
import type { RelayLogger } from '../ports/relay-logger';
import type { LaneTable } from './lane.table';

export interface MarksRescanDeps {
  outbox: Pick<OutboxRelayStore, 'findRetryingAggregates'>;
  lanes: LaneTable;
  /** Server-time estimate, ms. */
  now: () => number;
  /** Whether a destination is held (due aggregates then take only the room there is). */
  holding: () => boolean;
  /** The engine's `holdUntil`: a lane that waits until `retryAt`, or a note when none fits. */
  holdUntil: (ref: AggregateRef, retryAt: Date) => void;
  closed: () => boolean;
  /** Runs the rescan as one of the engine's tasks (`close` waits for it). */
  track: (task: Promise<void>) => void;
  logger: RelayLogger;
}

/**
 * Reads again, in order, the aggregates whose marked events the engine does not track (see
 * `LaneTable`), and rebuilds its note of them, once the marker writes under way landed: every
 * aggregate with a marked pending event gets a lane (it waits for its retry, then is read) -
 * when it is due and no destination is held, as soon as a lane fits; else while there is room,
 * and it is noted otherwise. Aggregates whose marks are gone are forgotten. Started by the
 * sweep and when a hold ends; one at a time, in the background.
 */
export class MarksRescan {
  /** Writes of markers (held back, failure records) under way: a rescan waits for them. */
  private readonly markerWrites = new Set<Promise<unknown>>();
  private running = false;

  constructor(private readonly deps: MarksRescanDeps) {}

  /** A marker write under way (a rescan must see what it writes). */
  markerWrite(write: Promise<unknown>): void {
    this.markerWrites.add(write);
    void write.finally(() => this.markerWrites.delete(write));
  }

  start(): void {
    if (this.running || this.deps.closed() || this.deps.lanes.untracked.empty) return;
    this.running = true;
    this.deps.track(this.run());
  }

  private async run(): Promise<void> {
    const { lanes, closed } = this.deps;
    try {
      while (this.markerWrites.size > 0) await Promise.allSettled([...this.markerWrites]);
      if (closed()) return;
      lanes.untracked.startRebuild();
      await forEachRetryingAggregate(
        this.deps.outbox,
        () => !closed(),
        async (aggregate) => {
          const due = aggregate.retryAt.getTime() <= this.deps.now();
          if (due && !this.deps.holding()) await lanes.room();
          this.deps.holdUntil(aggregate, aggregate.retryAt);
        },
      );
      if (!closed()) lanes.untracked.finishRebuild();
    } catch (error) {
      this.deps.logger.warn(
        `Could not read the aggregates with marked events (the next sweep retries): ${describeError(error)}`,
      );
    } finally {
      lanes.untracked.abandonRebuild();
      this.running = false;
    }
  }
}
