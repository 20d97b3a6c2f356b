import type { OutboxEventRecord, OutboxDoc } from '../../lib/documents/outbox-event.document';
import { eventSlot } from '../../lib/events/event-slot';
import type { OutboxDeadLetter } from '../../lib/documents/dead-letter.document';
import type { OutboxRelayStore } from '../../lib/relay/ports/outbox-relay.store';
import type { SlotRange } from '../../lib/relay/ports/partition-layout';
import { at, contractEvent, ids } from './support/contract-events';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/** One implementation of `OutboxRelayStore` with an empty outbox, and a server-side view of it. */
export interface OutboxStoreFixture {
  /** The store; with `range`, one relay partition's (slot-filtered scans). */
  store(range?: SlotRange): OutboxRelayStore;
  /** Inserts committed events; a majority read sees them once this resolves. */
  insert(events: readonly OutboxEventRecord[]): Promise<void>;
  /** The stored document of `event` as the server holds it; undefined once removed. */
  stored(event: OutboxEventRecord): Promise<OutboxDoc | undefined>;
  /** The dead-letter collection's documents of `eventId`. */
  deadLetters(eventId: string): Promise<OutboxDeadLetter[]>;
}

export const OUTBOX_STORE_CASES = {
  pendingById:
    'findPendingState returns the pending ones among the ids, without payload and headers',
  aggregateOrder:
    'findPendingOfAggregates returns the pending events of the aggregates asked for, aggregate by aggregate (type, then id), each by sequence (none first), then _id, at most limit in all',
  drainPages:
    'findPendingPage pages through every pending event by aggregate type, id, sequence, _id, after the previous page’s last',
  retrying:
    'findRetryingAggregates lists aggregates with a pending event waiting for a retry, the earliest retry each, by aggregate, after `after`',
  stale:
    'findStaleEvents lists pending events that occurred before olderThan and wait for no retry after dueBy, by _id',
  staleAfter: 'findStaleEvents pages by _id: only events after afterId, at most limit',
  stats: 'pendingStats counts pending events and gives occurredAt of the first pending by _id',
  published:
    'markPublished: pending -> published with publishedAt, nextAttemptAt cleared, fence stamped; again: nothing changes',
  held: 'markHeld sets nextAttemptAt on pending events without one; a failure’s own retry time stays',
  failure:
    'recordFailure sets attempts, nextAttemptAt and lastError and keeps the last 20 errors in errorHistory',
  fencing:
    'a write with a fence below the document’s stamp does not land (every fenced write); an equal or higher fence lands and stamps',
  nullFence: 'a null fence (no lease) writes whatever the stamp and stamps nothing',
  pendingOnly:
    'writes land on pending events only: a published event is neither marked again, held, failed nor dead-marked',
  deadLetter:
    'dead-letter move: markDead (not pending, found by findMarkedDead), copyToDeadLetters (twice: one copy), removeDead',
  removeDeadOnly: 'removeDead leaves an event that is not dead-marked in place',
  rangeScans:
    'with a slot range, scans see only events whose slot lies in it, slot first (pages, retrying, stale, stats, dead-marked)',
  rangeById:
    'with a slot range, reads by _id and by aggregate and every write are the same as without (events without a slot too)',
  rangeUnslotted:
    'with a slot range, a drain page holds the events without a slot that come before its events of their aggregate (same read), no others',
  scheduled:
    'scheduled events (availableAt): drain pages, stale scans and pendingStats skip them; findPendingOfAggregates(dueBy) leaves out those not due; findDueAggregates by (availableAt, _id), each aggregate once, marked (nextAttemptAt) or unmarked events apart; nextDueAt (after); scheduledStats; majorityTime is a Date not after serverTime',
  duePage:
    'findDueAggregates answers distinct aggregates, at most limit: one aggregate with more due events than any page the store reads (1,000, inheriting one due time) hides none due after it, in the partition range too, marked or not',
  majorityWrite:
    'majorityWriteTime is the server time of a majority write, in milliseconds: not before the majorityTime read before it, not after the serverTime read after it',
} as const;

export type OutboxStoreCase = keyof typeof OUTBOX_STORE_CASES;

const failure = (attempts: number, error = `error ${attempts}`, retryMs = 60_000) => ({
  attempts,
  nextAttemptAt: at(retryMs),
  error,
  at: at(attempts),
});

const dead = { reason: 'rejected' as const, error: 'MESSAGE_TOO_LARGE', attempts: 1, at: at(5) };

/** Two aggregate ids whose slots are in the other order than the ids: [lower slot, higher slot]. */
function slotOrderedPair(): [string, string] {
  const names = Array.from({ length: 20 }, (_, n) => `p${n}`);
  for (const x of names) {
    for (const y of names) {
      if (x < y && eventSlot('Order', x) > eventSlot('Order', y)) return [y, x];
    }
  }
  throw new Error('no pair of aggregates with slots in reverse order');
}

const drainKey = (event: OutboxEventRecord, bySlot: boolean): Array<string | number> => [
  bySlot ? (event.slot ?? -1) : 0,
  event.aggregateType,
  event.aggregateId,
  event.sequence ?? Number.NEGATIVE_INFINITY,
  String(event._id),
];

function byDrainOrder(bySlot: boolean) {
  return (a: OutboxEventRecord, b: OutboxEventRecord): number => {
    const ka = drainKey(a, bySlot);
    const kb = drainKey(b, bySlot);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
  };
}

async function allPages(store: OutboxRelayStore, limit: number): Promise<OutboxEventRecord[]> {
  const seen: OutboxEventRecord[] = [];
  for (let page = 0; page < 100; page++) {
    const next = await store.findPendingPage(seen[seen.length - 1], limit);
    seen.push(...next);
    if (next.length < limit) return seen;
  }
  throw new Error('findPendingPage never came to an end');
}

/**
 * The contract of `OutboxRelayStore` (lib/relay/ports/outbox-relay.store.ts), run against each
 * implementation: register it inside a `describe`, with a fixture made fresh for each case.
 */
export function outboxRelayStoreContract(
  fixture: () => Promise<OutboxStoreFixture>,
  skips: ContractSkips<OutboxStoreCase> = {},
): void {
  const test = contractCases(OUTBOX_STORE_CASES, skips);
  let f: OutboxStoreFixture;
  let store: OutboxRelayStore;
  beforeEach(async () => {
    f = await fixture();
    store = f.store();
  });

  test('pendingById', async () => {
    const [a, b, c] = [contractEvent('A'), contractEvent('A'), contractEvent('B')];
    await f.insert([a, b, c]);
    await store.markPublished([b._id], at(1), 1);
    const found = await store.findPendingState([c._id, a._id, b._id, contractEvent('X')._id]);
    expect(ids(found).sort()).toEqual(ids([a, c]).sort());
    for (const state of found) {
      expect(state).not.toHaveProperty('payload');
      expect(state).not.toHaveProperty('headers');
      expect(state).toMatchObject({ status: 'pending', aggregateType: 'Order' });
    }
    expect(await store.findPendingState([])).toEqual([]);
  });

  test('aggregateOrder', async () => {
    const ref = { aggregateType: 'Order', aggregateId: 'ordered' };
    const third = contractEvent('ordered', { sequence: 3 });
    const first = contractEvent('ordered', { sequence: 1 });
    const unsequenced = contractEvent('ordered');
    const second = contractEvent('ordered', { sequence: 2 });
    const published = contractEvent('ordered', { sequence: 4 });
    const invoice = contractEvent('ordered', { aggregateType: 'Invoice' });
    const before = [
      contractEvent('b-before', { sequence: 2 }),
      contractEvent('b-before', { sequence: 1 }),
    ];
    const after = contractEvent('z-after');
    await f.insert([third, first, invoice, unsequenced, after, second, published, ...before]);
    await f.insert([contractEvent('other')]);
    await store.markPublished([published._id], at(1), 1);
    const found = await store.findPendingOfAggregates([ref], 10);
    expect(ids(found)).toEqual(ids([unsequenced, first, second, third]));
    expect(found[1].payload).toEqual(first.payload);
    expect(ids(await store.findPendingOfAggregates([ref], 2))).toEqual(ids([unsequenced, first]));
    // Many at once: type, then id (binary order), whatever order they are asked in.
    const many = [
      { aggregateType: 'Order', aggregateId: 'z-after' },
      ref,
      { aggregateType: 'Invoice', aggregateId: 'ordered' },
      { aggregateType: 'Order', aggregateId: 'b-before' },
    ];
    const inOrder = [invoice, before[1], before[0], unsequenced, first, second, third, after];
    expect(ids(await store.findPendingOfAggregates(many, 20))).toEqual(ids(inOrder));
    expect(ids(await store.findPendingOfAggregates(many, 4))).toEqual(ids(inOrder.slice(0, 4)));
  });

  test('drainPages', async () => {
    const events = [
      contractEvent('B', { sequence: 2 }),
      contractEvent('A'),
      contractEvent('B', { aggregateType: 'Invoice', sequence: 1 }),
      contractEvent('B', { sequence: 1 }),
      contractEvent('A'),
      contractEvent('C', { sequence: 1 }),
      contractEvent('A', { aggregateType: 'Invoice' }),
    ];
    const published = contractEvent('AA');
    await f.insert([...events, published]);
    await store.markPublished([published._id], at(1), 1);
    const expected = [...events].sort(byDrainOrder(false));
    expect(ids(await allPages(store, 2))).toEqual(ids(expected));
    expect(ids(await allPages(store, 100))).toEqual(ids(expected));
    expect(await store.findPendingPage(expected[expected.length - 1], 10)).toEqual([]);
  });

  test('retrying', async () => {
    const [x1, x2, y1, z1, w1] = [
      contractEvent('x'),
      contractEvent('x'),
      contractEvent('y'),
      contractEvent('z'),
      contractEvent('w', { aggregateType: 'Invoice' }),
    ];
    await f.insert([x1, x2, y1, z1, w1, contractEvent('v')]);
    await store.recordFailure(x2, failure(1, 'late', 9_000), 1);
    await store.markHeld([x1._id], at(7_000), 1);
    await store.markHeld([y1._id], at(8_000), 1);
    await store.markHeld([w1._id], at(6_000), 1);
    await store.markHeld([z1._id], at(5_000), 1);
    await store.markPublished([z1._id], at(1), 1);
    const all = await store.findRetryingAggregates(undefined, 10);
    expect(all).toEqual([
      { aggregateType: 'Invoice', aggregateId: 'w', retryAt: at(6_000) },
      { aggregateType: 'Order', aggregateId: 'x', retryAt: at(7_000) },
      { aggregateType: 'Order', aggregateId: 'y', retryAt: at(8_000) },
    ]);
    expect(await store.findRetryingAggregates(undefined, 1)).toEqual(all.slice(0, 1));
    expect(await store.findRetryingAggregates(all[0], 10)).toEqual(all.slice(1));
    expect(await store.findRetryingAggregates(all[2], 10)).toEqual([]);
  });

  test('stale', async () => {
    const old = contractEvent('s1', { occurredAt: at(0) });
    const young = contractEvent('s2', { occurredAt: at(10_000) });
    const dueSoon = contractEvent('s3', { occurredAt: at(0) });
    const dueLater = contractEvent('s4', { occurredAt: at(0) });
    const alsoOld = contractEvent('s5', { occurredAt: at(1_000) });
    const published = contractEvent('s6', { occurredAt: at(0) });
    await f.insert([old, young, dueSoon, dueLater, alsoOld, published]);
    await store.markHeld([dueSoon._id], at(3_000), 1);
    await store.markHeld([dueLater._id], at(9_000), 1);
    await store.markPublished([published._id], at(1), 1);
    const stale = await store.findStaleEvents(undefined, at(5_000), at(4_000), 10);
    expect(ids(stale)).toEqual(ids([old, dueSoon, alsoOld]));
    expect(stale[0]).toMatchObject({ aggregateType: 'Order', aggregateId: 's1' });
  });

  test('staleAfter', async () => {
    const events = ['a1', 'a2', 'a3', 'a4'].map((id) => contractEvent(id, { occurredAt: at(0) }));
    await f.insert(events);
    await store.markHeld([events[2]._id], at(9_000), 1);
    const page = (afterId: unknown, limit: number) =>
      store.findStaleEvents(afterId, at(5_000), at(4_000), limit);
    expect(ids(await page(undefined, 1))).toEqual(ids([events[0]]));
    expect(ids(await page(events[0]._id, 10))).toEqual(ids([events[1], events[3]]));
    expect(ids(await page(events[1]._id, 1))).toEqual(ids([events[3]]));
    expect(await page(events[3]._id, 10)).toEqual([]);
  });

  test('stats', async () => {
    expect(await store.pendingStats()).toEqual({ count: 0 });
    // The first by _id occurred later than the second: the store reports the first by _id.
    const first = contractEvent('t1', { occurredAt: at(2_000) });
    const second = contractEvent('t2', { occurredAt: at(1_000) });
    const published = contractEvent('t0', { occurredAt: at(0) });
    await f.insert([published, first, second]);
    await store.markPublished([published._id], at(1), 1);
    expect(await store.pendingStats()).toEqual({ count: 2, oldestOccurredAt: at(2_000) });
  });

  test('scheduled', async () => {
    const s1 = contractEvent('s1', { availableAt: at(1_000) });
    const s2 = contractEvent('s2', { availableAt: at(2_000) });
    const s1Later = contractEvent('s1', { availableAt: at(3_000) });
    const s1After = contractEvent('s1'); // not ordered against the delay (waitForScheduled: false)
    const plain = contractEvent('p');
    const gone = contractEvent('s3', { availableAt: at(500) });
    await f.insert([s1, s2, s1Later, s1After, plain, gone]);
    await store.markPublished([gone._id], at(600), 1);
    const ref = { aggregateType: 'Order', aggregateId: 's1' };
    expect(ids(await store.findPendingPage(undefined, 10))).toEqual(ids([plain, s1After]));
    expect(ids(await store.findStaleEvents(undefined, at(10_000), at(10_000), 10))).toEqual(
      ids([s1After, plain]),
    );
    expect(await store.pendingStats()).toEqual({ count: 2, oldestOccurredAt: at(0) });
    expect(ids(await store.findPendingOfAggregates([ref], 10))).toEqual(
      ids([s1, s1Later, s1After]),
    );
    expect(ids(await store.findPendingOfAggregates([ref], 10, at(2_999)))).toEqual(
      ids([s1, s1After]),
    );
    expect(ids(await store.findPendingOfAggregates([ref], 10, at(999)))).toEqual(ids([s1After]));
    expect(await store.findDueAggregates(at(999), 10, false)).toEqual([]);
    expect(await store.findDueAggregates(at(10_000), 10, false)).toEqual([
      { aggregateType: 'Order', aggregateId: 's1', availableAt: at(1_000) },
      { aggregateType: 'Order', aggregateId: 's2', availableAt: at(2_000) },
    ]);
    expect(await store.findDueAggregates(at(10_000), 1, false)).toHaveLength(1);
    expect(await store.findDueAggregates(at(10_000), 10, true)).toEqual([]);
    expect(await store.nextDueAt()).toEqual(at(1_000));
    expect(await store.nextDueAt(at(1_000))).toEqual(at(2_000));
    expect(await store.nextDueAt(at(3_000))).toBeUndefined();
    expect(await store.scheduledStats(at(1_500))).toEqual({
      count: 3,
      oldestOverdueAt: at(1_000),
      nextDueAt: at(2_000),
    });
    expect((await store.serverTime()) instanceof Date).toBe(true);
    const majority = await store.majorityTime();
    expect(majority instanceof Date).toBe(true);
    expect(majority.getTime()).toBeLessThanOrEqual((await store.serverTime()).getTime());
    // Held back (marked): asked for apart from the others (its next events are not marked).
    await store.markHeld([s1._id], at(0), 1);
    expect(await store.findDueAggregates(at(10_000), 10, true)).toEqual([
      { aggregateType: 'Order', aggregateId: 's1', availableAt: at(1_000) },
    ]);
    expect(await store.findDueAggregates(at(10_000), 10, false)).toEqual([
      { aggregateType: 'Order', aggregateId: 's2', availableAt: at(2_000) },
      { aggregateType: 'Order', aggregateId: 's1', availableAt: at(3_000) },
    ]);
  });

  test('duePage', async () => {
    // The production store read `limit * 4` due events and grouped them: `big` filled the page.
    const big = Array.from({ length: 1_000 }, () =>
      contractEvent('big', { availableAt: at(1_000) }),
    );
    const after = contractEvent('after', { availableAt: at(1_001) });
    const later = contractEvent('later', { availableAt: at(1_002) });
    await f.insert([...big, after, later]);
    const refs = (due: Array<{ aggregateId: string }>) => due.map((ref) => ref.aggregateId);
    expect(refs(await store.findDueAggregates(at(5_000), 2, false))).toEqual(['big', 'after']);
    expect(refs(await store.findDueAggregates(at(5_000), 10, false))).toEqual([
      'big',
      'after',
      'later',
    ]);
    expect(refs(await store.findDueAggregates(at(1_001), 10, false))).toEqual(['big', 'after']);
    // Held back: the first 300 of `big` are marked, the rest not; both reads find `after`.
    await store.markHeld(
      big.slice(0, 300).map((event) => event._id),
      at(0),
      1,
    );
    expect(refs(await store.findDueAggregates(at(5_000), 2, true))).toEqual(['big']);
    expect(refs(await store.findDueAggregates(at(5_000), 2, false))).toEqual(['big', 'after']);
    const everyEvent = { from: 0, to: 4096 };
    expect(refs(await f.store(everyEvent).findDueAggregates(at(5_000), 3, false))).toEqual([
      'big',
      'after',
      'later',
    ]);
  });

  test('majorityWrite', async () => {
    const before = await store.majorityTime();
    const written = await store.majorityWriteTime();
    const after = await store.serverTime();
    expect(written instanceof Date).toBe(true);
    expect(written.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(written.getTime()).toBeLessThanOrEqual(after.getTime());
  });

  test('published', async () => {
    const [e, other] = [contractEvent('p'), contractEvent('p')];
    await f.insert([e, other]);
    await store.markHeld([e._id], at(9_000), 4);
    await store.markPublished([e._id], at(100), 5);
    const doc = await f.stored(e);
    expect(doc).toMatchObject({ status: 'published', publishedAt: at(100), relayFence: 5 });
    expect(doc?.nextAttemptAt).toBeUndefined();
    expect(await f.stored(other)).toMatchObject({ status: 'pending' });
    await store.markPublished([e._id], at(200), 6);
    expect(await f.stored(e)).toMatchObject({ publishedAt: at(100), relayFence: 5 });
    await store.markPublished([], at(300), 6);
  });

  test('held', async () => {
    const [failed, behind] = [contractEvent('h'), contractEvent('h')];
    await f.insert([failed, behind]);
    await store.recordFailure(failed, failure(1, 'refused', 60_000), 2);
    await store.markHeld([failed._id, behind._id], at(1_000), 2);
    expect((await f.stored(failed))?.nextAttemptAt).toEqual(at(60_000));
    expect(await f.stored(behind)).toMatchObject({ nextAttemptAt: at(1_000), relayFence: 2 });
    await store.markHeld([behind._id], at(2_000), 2);
    expect((await f.stored(behind))?.nextAttemptAt).toEqual(at(1_000));
  });

  test('failure', async () => {
    const e = contractEvent('f');
    await f.insert([e]);
    for (let attempt = 1; attempt <= 22; attempt++) {
      await store.recordFailure(e, failure(attempt, `error ${attempt}`, attempt * 1_000), 3);
    }
    const doc = await f.stored(e);
    expect(doc).toMatchObject({
      status: 'pending',
      attempts: 22,
      nextAttemptAt: at(22_000),
      lastError: 'error 22',
      relayFence: 3,
    });
    expect(doc?.errorHistory).toHaveLength(20);
    expect(doc?.errorHistory?.[0]).toEqual({ at: at(3), attempt: 3, error: 'error 3' });
    expect(doc?.errorHistory?.[19]).toEqual({ at: at(22), attempt: 22, error: 'error 22' });
  });

  test('fencing', async () => {
    const e = contractEvent('fence');
    await f.insert([e]);
    await store.recordFailure(e, failure(2, 'newer'), 8);
    await store.recordFailure(e, failure(1, 'older'), 7);
    await store.markHeld([e._id], at(1), 7);
    await store.markPublished([e._id], at(1), 7);
    await store.markDead(e, dead, 7);
    expect(await f.stored(e)).toMatchObject({
      status: 'pending',
      attempts: 2,
      lastError: 'newer',
      relayFence: 8,
    });
    await store.recordFailure(e, failure(3, 'same'), 8);
    expect(await f.stored(e)).toMatchObject({ attempts: 3, relayFence: 8 });
    await store.markDead(e, dead, 9);
    expect(await f.stored(e)).toMatchObject({ status: 'dead', relayFence: 9 });
    await store.removeDead(e._id, 8);
    expect(await f.stored(e)).toMatchObject({ status: 'dead' });
    await store.removeDead(e._id, 10);
    expect(await f.stored(e)).toBeUndefined();
  });

  test('nullFence', async () => {
    const [stamped, fresh] = [contractEvent('n'), contractEvent('n2')];
    await f.insert([stamped, fresh]);
    await store.markHeld([stamped._id], at(1), 50);
    await store.markPublished([stamped._id, fresh._id], at(2), null);
    expect(await f.stored(stamped)).toMatchObject({ status: 'published', relayFence: 50 });
    const doc = await f.stored(fresh);
    expect(doc?.status).toBe('published');
    expect(doc?.relayFence).toBeUndefined();
  });

  test('pendingOnly', async () => {
    const e = contractEvent('done');
    await f.insert([e]);
    await store.markPublished([e._id], at(1), 1);
    await store.markPublished([e._id], at(2), 1);
    await store.markHeld([e._id], at(3), 1);
    await store.recordFailure(e, failure(1), 1);
    await store.markDead(e, dead, 1);
    const doc = await f.stored(e);
    expect(doc).toMatchObject({ status: 'published', publishedAt: at(1), attempts: 0 });
    expect(doc?.nextAttemptAt).toBeUndefined();
    expect(doc?.lastError).toBeUndefined();
    expect(doc?.deadLetter).toBeUndefined();
  });

  test('deadLetter', async () => {
    const e = contractEvent('dead');
    await f.insert([e]);
    await store.recordFailure(e, failure(1, 'first'), 2);
    await store.markDead(e, dead, 2);
    expect(await store.findPendingState([e._id])).toEqual([]);
    expect(ids(await allPages(store, 10))).toEqual([]);
    const marked = (await store.findMarkedDead(10)).filter((m) => m.eventId === e.eventId);
    expect(marked).toHaveLength(1);
    expect(marked[0]).toMatchObject({ status: 'dead', deadLetter: dead, payload: e.payload });
    expect(marked[0].nextAttemptAt).toBeUndefined();
    await store.copyToDeadLetters(marked[0]);
    await store.copyToDeadLetters(marked[0]); // a crash before the removal repeats the copy
    const letters = await f.deadLetters(e.eventId);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      eventId: e.eventId,
      outboxId: e._id,
      aggregateType: 'Order',
      aggregateId: 'dead',
      payload: e.payload,
      reason: 'rejected',
      attempts: 1,
      lastError: 'MESSAGE_TOO_LARGE',
      deadLetteredAt: dead.at,
      errors: [
        { at: at(1), attempt: 1, error: 'first' },
        { at: dead.at, attempt: 1, error: 'MESSAGE_TOO_LARGE' },
      ],
    });
    expect(letters[0]).not.toHaveProperty('status');
    expect(letters[0]).not.toHaveProperty('relayFence');
    await store.removeDead(e._id, 2);
    await store.removeDead(e._id, 2);
    expect(await f.stored(e)).toBeUndefined();
    expect(await store.findMarkedDead(10)).toEqual([]);
  });

  test('removeDeadOnly', async () => {
    const e = contractEvent('alive');
    await f.insert([e]);
    await store.removeDead(e._id, 1);
    await store.removeDead(e._id, null);
    expect(await f.stored(e)).toMatchObject({ status: 'pending' });
  });

  test('rangeScans', async () => {
    const [low, high] = slotOrderedPair();
    const range = { from: eventSlot('Order', low), to: eventSlot('Order', high) + 1 };
    const outside = ['q1', 'q2', 'q3', 'q4'].filter((id) => {
      const slot = eventSlot('Order', id);
      return slot < range.from || slot >= range.to;
    })[0];
    const events = [
      contractEvent(high, { occurredAt: at(0) }),
      contractEvent(low, { occurredAt: at(0) }),
      contractEvent(high, { occurredAt: at(0) }),
      contractEvent(outside, { occurredAt: at(0) }),
      contractEvent(low, { occurredAt: at(0) }),
    ];
    const deadOutside = contractEvent(outside);
    const deadInside = contractEvent(low);
    await f.insert([...events, deadOutside, deadInside]);
    await store.markDead(deadOutside, dead, 1);
    await store.markDead(deadInside, dead, 1);
    const scoped = f.store(range);
    const inRange = events.filter((event) => event.aggregateId !== outside);
    const expected = [...inRange].sort(byDrainOrder(true));
    expect(expected[0].aggregateId).toBe(low); // slot first: `low` sorts after `high` by id
    expect(ids(await allPages(scoped, 1))).toEqual(ids(expected));
    expect(ids(await allPages(scoped, 10))).toEqual(ids(expected));
    expect((await scoped.pendingStats()).count).toBe(inRange.length);
    const stale = await scoped.findStaleEvents(undefined, at(1), at(1), 10);
    expect(ids(stale)).toEqual(ids(inRange));
    expect(ids(await scoped.findMarkedDead(10))).toEqual(ids([deadInside]));
    await store.markHeld([events[0]._id, events[1]._id, events[3]._id], at(9), 1);
    expect(
      (await scoped.findRetryingAggregates(undefined, 10)).map((ref) => ref.aggregateId),
    ).toEqual([low, high]);
  });

  test('rangeById', async () => {
    const inside = contractEvent('r-in');
    const slot = inside.slot as number;
    const noSlot = contractEvent('r-old');
    delete noSlot.slot;
    const outside = contractEvent('r-out', { slot: (slot + 1) % 4096 });
    await f.insert([inside, noSlot, outside]);
    const scoped = f.store({ from: slot, to: slot + 1 });
    const found = await scoped.findPendingState([inside._id, noSlot._id, outside._id]);
    expect(ids(found).sort()).toEqual(ids([inside, noSlot, outside]).sort());
    for (const event of [inside, noSlot, outside]) {
      const ref = { aggregateType: event.aggregateType, aggregateId: event.aggregateId };
      expect(ids(await scoped.findPendingOfAggregates([ref], 10))).toEqual(ids([event]));
    }
    await scoped.markPublished([noSlot._id, outside._id], at(1), 1);
    expect(await f.stored(noSlot)).toMatchObject({ status: 'published' });
    expect(await f.stored(outside)).toMatchObject({ status: 'published' });
  });

  test('rangeUnslotted', async () => {
    const unslotted = (aggregateId: string) => {
      const event = contractEvent(aggregateId);
      delete event.slot;
      return event;
    };
    // Commit order 1 to 4 of one aggregate, two of them by a writer of a version before slots.
    const events = [contractEvent('u-a'), unslotted('u-a'), contractEvent('u-a'), unslotted('u-a')];
    await f.insert([...events, unslotted('u-b')]);
    const slot = events[0].slot as number;
    const scoped = f.store({ from: slot, to: slot + 1 });
    // The last one (later than every event of its aggregate with a slot) comes by the stream.
    expect(ids(await allPages(scoped, 10))).toEqual(ids(events.slice(0, 3)));
    expect(ids(await allPages(scoped, 1))).toEqual(ids(events.slice(0, 3)));
  });
}
