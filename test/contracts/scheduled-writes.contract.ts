import type { EmitSchedule, OutboxEventInput } from '../../lib';
import type { CancelScheduledResult } from '../../lib/events/schedule/cancel-result';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/**
 * The write side's schedule rules through the public API (`OutboxEmitter.emit` and `cancel` in
 * `@Transactional` code), as an app sees them: once with the production writer on MongoDB,
 * once in `OutboxTestingModule`, so that a test written against the testing module says what
 * production does.
 */
export interface ScheduledWritesFixture {
  /** Emits `event` in a transaction of its own; its eventId. */
  emit(event: OutboxEventInput, schedule?: EmitSchedule): Promise<string>;
  /** Runs `fn` in a transaction (`OutboxEmitter.cancel` inside it joins it). */
  inTransaction<T>(fn: () => Promise<T>): Promise<T>;
  /** `OutboxEmitter.cancel(eventId)`, in the transaction running. */
  cancel(eventId: string): Promise<CancelScheduledResult>;
  /** What the relay does with every due pending event: publishes it (marks it `published`). */
  publishDue(): Promise<void>;
  /** The event's status and due time, as stored. */
  stored(eventId: string): Promise<{ status: string; availableAt?: Date } | undefined>;
}

export const SCHEDULED_WRITES_CASES = {
  cancelOnce:
    'cancel of an event not yet due: cancelled (alreadyCancelled false); again in another transaction: alreadyCancelled true; stored as cancelled',
  cancelTwiceInOne:
    'two cancels of one event in one transaction: cancelled, then cancelled with alreadyCancelled true (the transaction sees its own cancel)',
  cancelOutcomes:
    'cancel of a due event not yet published: already-due; of an immediate one: not-scheduled; of an unknown id: not-found',
  cancelPublished: 'cancel of a scheduled event the relay published: published',
  inherit:
    'an event of an aggregate with a pending scheduled event inherits its due time; once that one is published, a later event inherits nothing',
} as const;

export type ScheduledWritesCase = keyof typeof SCHEDULED_WRITES_CASES;

let aggregates = 0;
const event = (aggregateId: string, eventType = 'ReminderDue'): OutboxEventInput => ({
  eventType,
  aggregateType: 'Order',
  aggregateId,
  payload: {},
});

export function scheduledWritesContract(
  fixture: () => Promise<ScheduledWritesFixture>,
  skips: ContractSkips<ScheduledWritesCase> = {},
): void {
  const test = contractCases(SCHEDULED_WRITES_CASES, skips);
  let f: ScheduledWritesFixture & {
    cancelInOne(...eventIds: string[]): Promise<CancelScheduledResult[]>;
  };
  beforeAll(async () => {
    const given = await fixture();
    // Cancels each of `eventIds` in turn, all in one transaction.
    const cancelInOne = (...eventIds: string[]) =>
      given.inTransaction(async () => {
        const results: CancelScheduledResult[] = [];
        for (const id of eventIds) results.push(await given.cancel(id));
        return results;
      });
    f = Object.assign(given, { cancelInOne });
  });
  // Unique aggregates per case: the cases share one outbox.
  const aggregate = () => `contract-${++aggregates}`;
  const later = () => ({ availableAt: new Date(Date.now() + 60 * 60_000) });
  // Due at once: in the past, well within the write side's 60 s tolerance.
  const due = () => ({ availableAt: new Date(Date.now() - 1_000) });

  test('cancelOnce', async () => {
    const id = await f.emit(event(aggregate()), later());
    const [first] = await f.cancelInOne(id);
    expect(first).toMatchObject({ outcome: 'cancelled', eventId: id, alreadyCancelled: false });
    const [again] = await f.cancelInOne(id);
    expect(again).toMatchObject({ outcome: 'cancelled', alreadyCancelled: true });
    expect(await f.stored(id)).toMatchObject({ status: 'cancelled' });
  });

  test('cancelTwiceInOne', async () => {
    const id = await f.emit(event(aggregate()), later());
    const [first, second] = await f.cancelInOne(id, id);
    expect(first).toMatchObject({ outcome: 'cancelled', alreadyCancelled: false });
    expect(second).toMatchObject({ outcome: 'cancelled', alreadyCancelled: true });
  });

  test('cancelOutcomes', async () => {
    const dueId = await f.emit(event(aggregate()), due());
    const immediate = await f.emit(event(aggregate()));
    const results = await f.cancelInOne(dueId, immediate, '0190a0a0-0000-7000-8000-000000000000');
    expect(results.map((result) => result.outcome)).toEqual([
      'already-due',
      'not-scheduled',
      'not-found',
    ]);
  });

  test('cancelPublished', async () => {
    const id = await f.emit(event(aggregate()), due());
    await f.publishDue();
    expect(await f.stored(id)).toMatchObject({ status: 'published' });
    const [result] = await f.cancelInOne(id);
    expect(result).toMatchObject({ outcome: 'published', eventId: id });
  });

  test('inherit', async () => {
    const waiting = aggregate();
    const { availableAt } = later();
    await f.emit(event(waiting), { availableAt });
    const inheriting = await f.emit(event(waiting, 'OrderPaid'));
    expect((await f.stored(inheriting))?.availableAt?.getTime()).toBe(availableAt.getTime());

    const published = aggregate();
    await f.emit(event(published), due());
    await f.publishDue();
    const after = await f.emit(event(published, 'OrderPaid'));
    expect(await f.stored(after)).toMatchObject({ status: 'pending' });
    expect((await f.stored(after))?.availableAt).toBeUndefined();
  });
}
