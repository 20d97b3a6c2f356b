import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { fakeTransactionRunner } from '../testing/fakes/fake-connection';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { OutboxTransactionClosedError } from '../transaction/errors/outbox-transaction-closed.error';
import { OutboxTransactionRequiredError } from '../transaction/errors/outbox-transaction-required.error';
import { OutboxEmitter } from './outbox.emitter';

function setup() {
  const { writer, runner } = fakeTransactionRunner();
  let serverNow = new Date(Date.UTC(2030, 0, 1));
  writer.now = () => serverNow;
  const emitter = new OutboxEmitter(
    runner,
    resolveOutboxOptions({ relay: false, scheduledEvents: true }),
    writer,
  );
  const row = (id: string) => writer.rows.find((r) => r.eventId === id);
  const advance = (ms: number) => (serverNow = new Date(serverNow.getTime() + ms));
  return { writer, runner, emitter, row, advance, now: () => serverNow };
}

const event: OutboxEventInput = {
  eventType: 'ReminderDue',
  aggregateType: 'Order',
  aggregateId: 'o-1',
  payload: {},
};

describe('OutboxEmitter.cancel(eventId)', () => {
  it('cancels a pending scheduled event not yet due (server time), when the transaction commits', async () => {
    const { runner, emitter, row, now } = setup();
    const id = await runner.run(async () => emitter.emit(event, { delayMs: 60_000 }));
    const result = await runner.run(() => emitter.cancel(id));
    expect(result).toEqual({
      outcome: 'cancelled',
      eventId: id,
      availableAt: new Date(now().getTime() + 60_000),
      cancelledAt: now(),
      alreadyCancelled: false,
    });
    expect(row(id)).toMatchObject({ status: 'cancelled', cancelledAt: now() });
    // Again: says so, changes nothing.
    const again = await runner.run(() => emitter.cancel(id));
    expect(again).toMatchObject({ outcome: 'cancelled', alreadyCancelled: true });
  });

  it('a cancel in a transaction that rolls back changes nothing', async () => {
    const { runner, emitter, row } = setup();
    const id = await runner.run(async () => emitter.emit(event, { delayMs: 60_000 }));
    await expect(
      runner.run(async () => {
        await emitter.cancel(id);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(row(id)?.status).toBe('pending');
  });

  it('says already-due, published, not-scheduled or not-found instead of cancelling', async () => {
    const { writer, runner, emitter, advance } = setup();
    const [due, immediate] = await runner.run(async () => [
      emitter.emit(event, { delayMs: 1_000 }),
      emitter.emit({ ...event, aggregateId: 'o-2' }),
    ]);
    const published = await runner.run(async () =>
      emitter.emit({ ...event, aggregateId: 'o-3' }, { delayMs: 1_000 }),
    );
    const publishedAt = new Date();
    Object.assign(
      writer.rows.find((r) => r.eventId === published)!,
      {
        status: 'published',
        publishedAt,
      },
    );
    advance(1_000);
    const results = await runner.run(async () => [
      await emitter.cancel(due),
      await emitter.cancel(immediate),
      await emitter.cancel(published),
      await emitter.cancel('0190a0a0-0000-7000-8000-000000000000'),
    ]);
    expect(results.map((r) => r.outcome)).toEqual([
      'already-due',
      'not-scheduled',
      'published',
      'not-found',
    ]);
    expect(results[2]).toEqual({ outcome: 'published', eventId: published, publishedAt });
  });

  it('an event emitted earlier in the same transaction is dropped before it is written', async () => {
    const { writer, runner, emitter } = setup();
    const [kept, result, immediate] = await runner.run(async () => {
      const scheduled = emitter.emit(event, { delayMs: 60_000 });
      const other = emitter.emit({ ...event, aggregateId: 'o-2' });
      return [other, await emitter.cancel(scheduled), await emitter.cancel(other)];
    });
    expect(result).toMatchObject({ outcome: 'cancelled', alreadyCancelled: false });
    expect(immediate).toMatchObject({ outcome: 'not-scheduled' });
    expect(writer.rows.map((r) => r.eventId)).toEqual([kept]);
  });

  it('outside a transaction: the same typed error as emit, naming cancel', async () => {
    const { emitter } = setup();
    const error = await emitter.cancel('e-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxTransactionRequiredError);
    expect((error as Error).message).toMatch(/Cannot cancel event e-1 outside a transaction/);
  });

  it('after the transaction body returned: OutboxTransactionClosedError', async () => {
    const { runner, emitter } = setup();
    let late: Promise<unknown> | undefined;
    await runner.run(async () => {
      late = new Promise((resolve) => setTimeout(resolve, 5)).then(() => emitter.cancel('e-1'));
    });
    await expect(late).rejects.toThrow(OutboxTransactionClosedError);
  });
});
