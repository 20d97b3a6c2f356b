import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { fakeTransactionRunner } from '../testing/fakes/fake-connection';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { OutboxTransactionClosedError } from '../transaction/errors/outbox-transaction-closed.error';
import { OutboxTransactionRequiredError } from '../transaction/errors/outbox-transaction-required.error';
import { InvalidOutboxEventError } from './errors/invalid-outbox-event.error';
import { OutboxEmitter } from './outbox.emitter';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function setup() {
  const { connection, writer, runner } = fakeTransactionRunner();
  const emitter = new OutboxEmitter(runner, resolveOutboxOptions({ relay: false }), writer);
  return { connection, writer, runner, emitter };
}

const event = (n: number): OutboxEventInput => ({
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: `order-${n}`,
  payload: { n },
});

describe('events commit with their transaction attempt', () => {
  it('inserts the emitted events with one insert, in the session, with the envelope fields', async () => {
    const { connection, writer, runner, emitter } = setup();
    const before = Date.now();
    const ids = await runner.run(async () => {
      await connection.insert('orders', { _id: 'order-1' });
      const first = emitter.emit(event(1));
      const more = emitter.emit([
        event(2),
        { ...event(3), headers: { traceparent: '00-abc-def-01' } },
      ]);
      return [first, ...more];
    });
    expect(writer.insertCalls).toBe(1);
    const rows = connection.docs('outbox');
    expect(rows.map((r) => r.eventId)).toEqual(ids);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(rows[0]).toMatchObject({
      eventType: 'OrderCreated',
      aggregateType: 'Order',
      aggregateId: 'order-1',
      payload: { n: 1 },
      status: 'pending',
      attempts: 0,
    });
    expect(rows[0]).not.toHaveProperty('headers');
    expect(rows[2].headers).toEqual({ traceparent: '00-abc-def-01' });
    expect((rows[0].occurredAt as Date).getTime()).toBeGreaterThanOrEqual(before);
    expect(connection.docs('orders')).toHaveLength(1);
  });

  it('writes nothing for a call that emits nothing', async () => {
    const { connection, writer, runner } = setup();
    await runner.run(() => connection.insert('orders', {}));
    expect(writer.insertCalls).toBe(0);
  });

  it('starts every retried attempt with an empty buffer: one outbox row per committed call', async () => {
    const { connection, writer, runner, emitter } = setup();
    connection.failAttempts.add(1); // the domain write of attempt 1 hits a transient error
    connection.failCommitAttempts.add(2); // attempt 2 flushes, then its commit fails
    let bodyRuns = 0;
    await runner.run(async () => {
      bodyRuns++;
      emitter.emit(event(1));
      await connection.insert('orders', { _id: 'order-1' });
    });
    expect(bodyRuns).toBe(3);
    expect(writer.insertCalls).toBe(2); // attempts 2 and 3 reached the flush
    expect(connection.docs('outbox')).toHaveLength(1);
    expect(connection.docs('orders')).toHaveLength(1);
  });

  it('a nested call buffers into the outer attempt, flushed once by the outermost call', async () => {
    const { connection, writer, runner, emitter } = setup();
    await runner.run(async () => {
      emitter.emit(event(1));
      await runner.run(async () => {
        emitter.emit(event(2));
      });
      expect(writer.insertCalls).toBe(0);
    });
    expect(writer.insertCalls).toBe(1);
    expect(connection.docs('outbox').map((r) => r.aggregateId)).toEqual(['order-1', 'order-2']);
  });

  it('a throwing body writes neither data nor events, and its error reaches the caller', async () => {
    const { connection, writer, runner, emitter } = setup();
    const boom = new Error('business rule');
    await expect(
      runner.run(async () => {
        await connection.insert('orders', {});
        emitter.emit(event(1));
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(writer.insertCalls).toBe(0);
    expect(connection.committed).toEqual([]);
  });

  it('a bad event throws its typed error inside the transaction, which rolls back', async () => {
    const { connection, runner, emitter } = setup();
    const error = await runner
      .run(async () => {
        await connection.insert('orders', {});
        emitter.emit(event(1));
        emitter.emit({ ...event(2), eventType: 'no spaces allowed' });
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOutboxEventError);
    expect((error as InvalidOutboxEventError).field).toBe('eventType');
    expect(connection.committed).toEqual([]);
  });

  it('rejects a whole batch when one event of it is bad', async () => {
    const { connection, runner, emitter } = setup();
    await runner.run(async () => {
      expect(() => emitter.emit([event(1), { ...event(2), aggregateId: '' }])).toThrow(
        InvalidOutboxEventError,
      );
    });
    expect(connection.docs('outbox')).toEqual([]);
  });

  it('refuses to emit outside a transaction', () => {
    const { emitter } = setup();
    expect(() => emitter.emit(event(1))).toThrow(OutboxTransactionRequiredError);
    expect(() => emitter.emit(event(1))).toThrow(/OrderCreated.*outside a transaction/);
  });

  it('refuses to emit after the transaction body returned (the event would be lost)', async () => {
    const { runner, emitter } = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let late: Promise<unknown> | undefined;
    await runner.run(async () => {
      late = gate.then(() => emitter.emit(event(1)));
    });
    release();
    await expect(late).rejects.toThrow(OutboxTransactionClosedError);
  });

  it('inside a transaction the app started itself, emit needs a @Transactional/run() boundary', async () => {
    const { connection, runner, emitter } = setup();
    await connection.transaction(async () => {
      expect(() => emitter.emit(event(1))).toThrow(OutboxTransactionRequiredError);
      await runner.run(async () => emitter.emit(event(2)));
    });
    expect(connection.docs('outbox').map((r) => r.aggregateId)).toEqual(['order-2']);
  });
});
