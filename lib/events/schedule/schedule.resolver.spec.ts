import { Types } from 'mongoose';
import type { NewOutboxEvent } from '../../documents/outbox-event.document';
import { OutboxError } from '../../common/errors/outbox.error';
import { IMMEDIATE } from './emit-schedule';
import type { ScheduleRequest } from './emit-schedule';
import { pendingScheduledOf } from './schedule-snapshot.reader';
import { aggregateKey } from '../../documents/outbox-event.document';
import { applySchedules, scheduleQueryOf } from './schedule.resolver';
import type { BufferedEvent } from './schedule.resolver';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const at = (ms: number) => new Date(NOW.getTime() + ms);

function entry(aggregateId: string, schedule: ScheduleRequest = IMMEDIATE): BufferedEvent {
  const row = {
    eventId: `e-${Math.random()}`,
    aggregateType: 'Order',
    aggregateId,
  } as NewOutboxEvent;
  return { row, schedule };
}

const latestOf = (pairs: Array<[string, Date]>) =>
  new Map(
    pairs.map(([id, date]) => [aggregateKey({ aggregateType: 'Order', aggregateId: id }), date]),
  );

describe('the read a transaction needs before writing its events', () => {
  it('none when every event opts out and none has a delay', () => {
    expect(scheduleQueryOf([entry('a', { wait: false }), entry('b', { wait: false })])).toBe(
      undefined,
    );
  });

  it('one query for all the aggregates whose events wait (each once), and the time for a delay', () => {
    const query = scheduleQueryOf([
      entry('a'),
      entry('a'),
      entry('b', { wait: false }),
      entry('c', { delayMs: 5, wait: false }),
    ]);
    expect(query).toEqual({
      aggregates: [{ aggregateType: 'Order', aggregateId: 'a' }],
      needsNow: true,
    });
  });

  it('filters on the partial index in every branch, so each branch can use it', () => {
    const scheduled = { status: 'pending', availableAt: { $exists: true } };
    expect(pendingScheduledOf([{ aggregateType: 'Order', aggregateId: 'a' }])).toEqual({
      ...scheduled,
      aggregateType: 'Order',
      aggregateId: 'a',
    });
    expect(
      pendingScheduledOf([
        { aggregateType: 'Order', aggregateId: 'a' },
        { aggregateType: 'Order', aggregateId: 'b' },
        { aggregateType: 'Invoice', aggregateId: 'a' },
      ]),
    ).toEqual({
      $or: [
        { ...scheduled, aggregateType: 'Order', aggregateId: { $in: ['a', 'b'] } },
        { ...scheduled, aggregateType: 'Invoice', aggregateId: 'a' },
      ],
    });
    // Only the time is needed: a filter that matches nothing (on _id).
    expect(pendingScheduledOf([])).toEqual({ _id: { $in: [] } });
  });
});

describe('due times: own time, or the server time + delay, raised to the aggregate latest', () => {
  it('counts delayMs from the server time of the read, not this process clock', () => {
    const [row] = applySchedules([entry('a', { delayMs: 60_000, wait: true })], {
      now: NOW,
      latest: new Map(),
    });
    expect(row.availableAt).toEqual(at(60_000));
  });

  it('an immediate event of an aggregate with a pending scheduled event inherits its time', () => {
    const rows = applySchedules([entry('a'), entry('b')], {
      now: NOW,
      latest: latestOf([['a', at(5_000)]]),
    });
    expect(rows[0].availableAt).toEqual(at(5_000));
    expect(rows[1]).not.toHaveProperty('availableAt');
  });

  it('a scheduled event gets max(own, latest): an earlier own time waits, a later one stays', () => {
    const rows = applySchedules(
      [
        entry('a', { availableAt: at(1_000), wait: true }),
        entry('b', { availableAt: at(9_000), wait: true }),
      ],
      {
        latest: latestOf([
          ['a', at(5_000)],
          ['b', at(5_000)],
        ]),
      },
    );
    expect(rows.map((row) => row.availableAt)).toEqual([at(5_000), at(9_000)]);
  });

  it('within one transaction: later events wait for the earlier scheduled ones of their aggregate', () => {
    const rows = applySchedules(
      [
        entry('a', { delayMs: 10_000, wait: true }),
        entry('a'),
        entry('a', { delayMs: 2_000, wait: true }),
        entry('b'),
      ],
      { now: NOW, latest: new Map() },
    );
    expect(rows.map((row) => row.availableAt)).toEqual([
      at(10_000),
      at(10_000),
      at(10_000),
      undefined,
    ]);
  });

  it('waitForScheduled: false keeps its own time (none: immediate), and still holds back later waiting events', () => {
    const rows = applySchedules(
      [
        entry('a', { wait: false }),
        entry('a', { availableAt: at(1_000), wait: false }),
        entry('a', { availableAt: at(30_000), wait: false }),
        entry('a'),
      ],
      { latest: latestOf([['a', at(20_000)]]) },
    );
    expect(rows.map((row) => row.availableAt)).toEqual([
      undefined,
      at(1_000),
      at(30_000),
      at(30_000),
    ]);
  });

  it('refuses a delay when the server returned no time, with a typed error naming the fix', () => {
    const error = (() => {
      try {
        applySchedules([entry('a', { delayMs: 1, wait: true })], { latest: new Map() });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OutboxError);
    expect((error as OutboxError).code).toBe('OUTBOX_SERVER_TIME_UNAVAILABLE');
  });
});

describe('order across a delay with two writers and no aggregateSequence', () => {
  it("an event that waits gets an _id after the waited-for events' greatest, also behind one of its own transaction", () => {
    const key = aggregateKey({ aggregateType: 'Order', aggregateId: 'a' });
    // Pod 1 wrote S1 (due at 5 s) a moment ago, in this second; its ObjectId's process part is
    // larger than any of ours: the ids this process makes now sort before it.
    const second = Math.floor(Date.now() / 1000) + 1;
    const s1 = new Types.ObjectId(`${second.toString(16).padStart(8, '0')}${'f'.repeat(16)}`);
    expect(new Types.ObjectId().toHexString() < s1.toHexString()).toBe(true);
    const rows = applySchedules([entry('a'), entry('a'), entry('b')], {
      now: NOW,
      latest: latestOf([['a', at(5_000)]]),
      lastIds: new Map([[key, s1]]),
    });
    const ids = rows.map((row) => (row as { _id?: Types.ObjectId })._id?.toHexString());
    expect(ids[0]! > s1.toHexString()).toBe(true);
    expect(ids[1]! > ids[0]!).toBe(true);
    expect(ids[2]).toBeUndefined(); // another aggregate: the driver's own id
  });
});
