import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { RelayWrites } from '../term/fenced.writes';
import type { Settle } from './aggregate.lane';
import type { DurableWrites } from './durable.writes';

/** `nextAttemptAt` of an event held back behind an earlier one of its aggregate (see `HeldBackMarker`). */
export const HELD_BACK = 0;

export interface HeldBackMarkerDeps {
  durable: DurableWrites;
  writes: RelayWrites;
  /** Runs a write as one of the engine's tasks. */
  track: (task: Promise<void>) => void;
  /** Told of every marker write under way (see `MarksRescan`). */
  markerWrite: (write: Promise<unknown>) => void;
}

/**
 * Leaves events pending in the collection, each settling once its marker is durable. The marker
 * of a held-back event is `nextAttemptAt` = the epoch: "read my aggregate from the collection
 * before publishing newer events of it", due at once (only a failed event's own `nextAttemptAt`
 * says when it may be tried again). The events held back in one turn of the event loop are
 * marked in one write.
 */
export class HeldBackMarker {
  private ids: unknown[] = [];
  private settles: Settle[] = [];

  constructor(private readonly deps: HeldBackMarkerDeps) {}

  holdBack(event: OutboxEventRecord, settle: Settle): void {
    if (event.nextAttemptAt) {
      settle();
      return;
    }
    if (this.ids.length === 0) queueMicrotask(() => this.flush());
    this.ids.push(event._id);
    this.settles.push(settle);
  }

  private flush(): void {
    const { ids, settles } = this;
    this.ids = [];
    this.settles = [];
    const write = this.deps.durable.run('markers of held-back events', () =>
      this.deps.writes.markHeld(ids, new Date(HELD_BACK)),
    );
    this.deps.markerWrite(write);
    this.deps.track(
      write.then((landed) => {
        if (landed) settles.forEach((settle) => settle());
      }),
    );
  }
}
