import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { fakeTransactionRunner } from '../testing/fakes/fake-connection';
import { eventSlot } from './event-slot';
import { OutboxEmitter } from './outbox.emitter';
import { withSlots } from './outbox-event.writer';
import type { NewOutboxEvent } from '../documents/outbox-event.document';

const input = (aggregateType: string, aggregateId: string): OutboxEventInput => ({
  eventType: 'Happened',
  aggregateType,
  aggregateId,
  payload: {},
});

describe('written events carry their slot', () => {
  it('the emitter stamps eventSlot(aggregateType, aggregateId) on every row', async () => {
    const { connection, runner, writer } = fakeTransactionRunner();
    const emitter = new OutboxEmitter(runner, resolveOutboxOptions({ relay: false }), writer);
    await runner.run(async () => {
      emitter.emit([input('Order', '1'), input('Order', '2'), input('Customer', '1')]);
    });
    const rows = connection.docs('outbox');
    expect(rows.map((row) => row.slot)).toEqual([
      eventSlot('Order', '1'),
      eventSlot('Order', '2'),
      eventSlot('Customer', '1'),
    ]);
  });

  it('the writer fills a missing slot (a requeued dead letter) and keeps a present one', () => {
    const row = (aggregateId: string, slot?: number): NewOutboxEvent => ({
      ...input('Order', aggregateId),
      eventId: aggregateId,
      occurredAt: new Date(0),
      status: 'pending',
      attempts: 0,
      ...(slot !== undefined ? { slot } : {}),
    });
    const complete = [row('a', eventSlot('Order', 'a'))];
    expect(withSlots(complete)).toBe(complete);
    expect(withSlots([row('a'), row('b', 7)]).map((r) => r.slot)).toEqual([
      eventSlot('Order', 'a'),
      7,
    ]);
  });
});
