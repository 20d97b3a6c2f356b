import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { fakeTransactionRunner } from '../testing/fakes/fake-connection';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { InvalidScheduleError } from './errors/invalid-schedule.error';
import { OutboxEmitter } from './outbox.emitter';

const SERVER_NOW = new Date(Date.UTC(2030, 5, 1));

function setup(scheduledEvents = true) {
  const { connection, writer, runner } = fakeTransactionRunner();
  // The "server" is ahead of this process by years: delays must count from its clock.
  writer.now = () => SERVER_NOW;
  const options = resolveOutboxOptions({ relay: false, scheduledEvents });
  const emitter = new OutboxEmitter(runner, options, writer);
  const due = (id: string) => writer.rows.find((row) => row.eventId === id)?.availableAt;
  return { connection, writer, runner, emitter, due };
}

const event = (aggregateId: string, eventType = 'OrderEvent'): OutboxEventInput => ({
  eventType,
  aggregateType: 'Order',
  aggregateId,
  payload: {},
});

describe('scheduled events: due time and order across delays, decided by the write side', () => {
  it('delayMs counts from the server time read in the transaction', async () => {
    const { runner, emitter, due } = setup();
    const id = await runner.run(async () => emitter.emit(event('a'), { delayMs: 60_000 }));
    expect(due(id)).toEqual(new Date(SERVER_NOW.getTime() + 60_000));
  });

  it('reads once per emitting transaction, for all its waiting aggregates', async () => {
    const { writer, runner, emitter } = setup();
    await runner.run(async () => {
      emitter.emit([event('a'), event('b')]);
      emitter.emit(event('a'));
      emitter.emit(event('c'), { waitForScheduled: false });
    });
    expect(writer.scheduleReads).toEqual([
      {
        aggregates: [
          { aggregateType: 'Order', aggregateId: 'a' },
          { aggregateType: 'Order', aggregateId: 'b' },
        ],
        needsNow: false,
      },
    ]);
  });

  it('without scheduledEvents: no read for any transaction, and an emit with a schedule is refused', async () => {
    const { writer, runner, emitter } = setup(false);
    await runner.run(async () => emitter.emit([event('a'), event('b')]));
    expect(writer.scheduleReads).toEqual([]);
    expect(writer.rows).toHaveLength(2);
    for (const schedule of [{ delayMs: 1_000 }, { availableAt: new Date(Date.now() + 60_000) }]) {
      await expect(runner.run(async () => emitter.emit(event('c'), schedule))).rejects.toThrow(
        InvalidScheduleError,
      );
    }
    await expect(
      runner.run(async () => emitter.emit(event('c'), { delayMs: 1_000 })),
    ).rejects.toThrow(/scheduledEvents: true/);
    expect(writer.rows).toHaveLength(2);
  });

  it('does not read when every event opts out and none has a delay', async () => {
    const { writer, runner, emitter } = setup();
    await runner.run(async () =>
      emitter.emit([event('a'), event('b')], { waitForScheduled: false }),
    );
    expect(writer.scheduleReads).toEqual([]);
    expect(writer.rows).toHaveLength(2);
  });

  it('a later transaction: events of an aggregate with a pending scheduled event inherit its time; others do not', async () => {
    const { runner, emitter, due } = setup();
    const later = new Date(Date.now() + 3_600_000);
    const scheduled = await runner.run(async () =>
      emitter.emit(event('a', 'ReminderDue'), { availableAt: later }),
    );
    const [next, other, optedOut] = await runner.run(async () => [
      emitter.emit(event('a', 'OrderPaid')),
      emitter.emit(event('b', 'OrderPaid')),
      emitter.emit(event('a', 'Audit'), { waitForScheduled: false }),
    ]);
    expect(due(scheduled)).toEqual(later);
    expect(due(next)).toEqual(later);
    expect(due(other)).toBeUndefined();
    expect(due(optedOut)).toBeUndefined();
  });

  it('a rolled-back scheduled event holds nothing back', async () => {
    const { runner, emitter, due } = setup();
    await expect(
      runner.run(async () => {
        emitter.emit(event('a'), { delayMs: 60_000 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const id = await runner.run(async () => emitter.emit(event('a')));
    expect(due(id)).toBeUndefined();
  });

  it('a bad schedule throws at emit time, in the transaction, which rolls back', async () => {
    const { connection, runner, emitter } = setup();
    await expect(
      runner.run(async () => {
        await connection.insert('orders', { _id: 1 });
        emitter.emit(event('a'), { delayMs: -1 });
      }),
    ).rejects.toThrow(InvalidScheduleError);
    expect(connection.docs('orders')).toEqual([]);
    expect(connection.docs('outbox')).toEqual([]);
  });

  it('one bad schedule in a list rejects the whole call', async () => {
    const { runner, emitter, writer } = setup();
    await runner.run(async () => {
      expect(() => emitter.emit([event('a'), event('b')], { delayMs: NaN })).toThrow(
        /delayMs must be a whole number/,
      );
    });
    expect(writer.rows).toEqual([]);
  });
});
