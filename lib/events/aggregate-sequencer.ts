import type { ClientSession, Connection } from 'mongoose';
import { groupBy } from '../common/group-by';
import type { NewOutboxEvent } from '../documents/outbox-event.document';
import type { SequenceCounterDoc } from '../documents/sequence-counter.document';

const NAMESPACE_EXISTS = 48;

/**
 * Draws per-aggregate sequence numbers (option `aggregateSequence`) from one counter document
 * per aggregate, inside the emitting transaction. Two transactions emitting for the same
 * aggregate both write its counter, so MongoDB lets only one commit at a time (the other gets a
 * write conflict and is retried): sequence order is commit order, without gaps, and an aborted
 * transaction gives its numbers back.
 */
export class AggregateSequencer {
  constructor(
    private readonly connection: Connection,
    private readonly collection: string,
  ) {}

  async ensureCollection(): Promise<void> {
    try {
      await this.connection.createCollection(this.collection);
    } catch (error) {
      // It exists already (created by another instance, or at an earlier start).
      if ((error as { code?: unknown }).code !== NAMESPACE_EXISTS) throw error;
    }
  }

  /** Returns `events` with `sequence` set, in the same order (one counter write per aggregate). */
  async stamp(events: NewOutboxEvent[], session: ClientSession): Promise<NewOutboxEvent[]> {
    const counters = this.connection.collection<SequenceCounterDoc>(this.collection);
    const next = new Map<string, number>();
    for (const [key, { length: count }] of groupBy(events, counterKey)) {
      const doc = await counters.findOneAndUpdate(
        { _id: key },
        { $inc: { sequence: count } },
        { upsert: true, returnDocument: 'after', session },
      );
      if (!doc || typeof doc.sequence !== 'number') {
        throw new Error(`The sequence counter of aggregate ${key} could not be read back.`);
      }
      next.set(key, doc.sequence - count + 1);
    }
    return events.map((event) => {
      const key = counterKey(event);
      const sequence = next.get(key) as number;
      next.set(key, sequence + 1);
      return { ...event, sequence };
    });
  }
}

/** `_id` of an aggregate's counter, e.g. `Order/o-42` (an aggregateType cannot contain '/'). */
function counterKey(event: Pick<NewOutboxEvent, 'aggregateType' | 'aggregateId'>): string {
  return `${event.aggregateType}/${event.aggregateId}`;
}
