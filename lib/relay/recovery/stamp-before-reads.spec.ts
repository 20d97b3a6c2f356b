import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { RelayEngine } from '../engine/relay.engine';
import type { AggregateRef } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import { CheckpointTracker } from '../stream/checkpoint.tracker';
import { CollectionDrain } from './collection.drain';
import { loadRetryingAggregates } from './retrying-aggregates.loader';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };

function event(id: number, slot: number | undefined, nextAttemptAt?: Date): OutboxEventRecord {
  return {
    _id: `e${id}`,
    eventId: `e${id}`,
    aggregateType: 'Order',
    aggregateId: `order-${id}`,
    eventType: 'OrderPlaced',
    payload: {},
    occurredAt: new Date(0),
    status: 'pending',
    attempts: nextAttemptAt ? 1 : 0,
    sequence: id,
    slot,
    nextAttemptAt,
  } as unknown as OutboxEventRecord;
}

/** A partition's view of the collection: its range reads see only events with a slot. */
function partitionStore(events: OutboxEventRecord[]) {
  const slotted = () => events.filter((e) => e.slot !== undefined);
  return {
    async stampMissingSlots(limit: number): Promise<number> {
      const missing = events.filter((e) => e.slot === undefined).slice(0, limit);
      for (const e of missing) e.slot = 7;
      return missing.length;
    },
    async findPendingPage(after: OutboxEventRecord | undefined, limit: number) {
      const from = after ? slotted().findIndex((e) => e._id === after._id) + 1 : 0;
      return slotted().slice(from, from + limit);
    },
    async findRetryingAggregates(after: AggregateRef | undefined, limit: number) {
      return slotted()
        .filter((e) => e.nextAttemptAt && (!after || e.aggregateId > after.aggregateId))
        .slice(0, limit)
        .map((e) => ({ ...e, retryAt: e.nextAttemptAt! }));
    },
  };
}

/** What a drain or a term's start hands the engine. */
function recordingEngine() {
  const offered: string[] = [];
  const held: string[] = [];
  const engine = {
    budget: {
      reserve: async (events: number) => ({ events, bytes: 0 }),
      settleReservation: () => undefined,
    },
    offerRead: async (
      _reservation: unknown,
      read: () => Promise<Array<{ event: OutboxEventRecord }>>,
    ) => {
      const page = await read();
      offered.push(...page.map((item) => item.event.eventId));
      return page;
    },
    holdUntil: (ref: AggregateRef) => held.push(ref.aggregateId),
  };
  return { engine: engine as unknown as RelayEngine, offered, held };
}

describe('a partition stamps missing slots before it reads from the collection', () => {
  it('drains the events written before slots too', async () => {
    const store = partitionStore([event(1, undefined), event(2, 7)]);
    const { engine, offered } = recordingEngine();
    const drain = new CollectionDrain(store, engine, 10, silent);
    await drain.run(new CheckpointTracker(), () => true);
    expect(offered).toEqual(['e1', 'e2']);
  });

  it('holds at its term start the aggregates whose marked events were written before slots', async () => {
    const retryAt = new Date(60_000);
    const store = partitionStore([event(1, undefined, retryAt), event(2, 7, retryAt)]);
    const { engine, held } = recordingEngine();
    await loadRetryingAggregates(store, engine, () => true);
    expect(held).toEqual(['order-1', 'order-2']);
  });
});
