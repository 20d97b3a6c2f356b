import { fakeTransactionRunner } from '../testing/fakes/fake-connection';
import { TransactionPropagationError } from './errors/transaction-propagation.error';
import { Propagation } from './propagation';

function setup() {
  const { connection, runner } = fakeTransactionRunner();
  return { connection, runner };
}

describe('TransactionRunner propagation', () => {
  it('Required (default) starts a transaction when none runs and commits its writes', async () => {
    const { connection, runner } = setup();
    expect(runner.isActive()).toBe(false);
    const result = await runner.run(async () => {
      expect(runner.isActive()).toBe(true);
      expect(runner.currentSession()).toBeDefined();
      await connection.insert('orders', { n: 1 });
      return 42;
    });
    expect(result).toBe(42);
    expect(connection.transactionsStarted).toBe(1);
    expect(connection.docs('orders')).toEqual([{ n: 1 }]);
  });

  it('nested Required calls join the outer transaction instead of starting another', async () => {
    const { connection, runner } = setup();
    let outerSession: unknown;
    await runner.run(async () => {
      outerSession = runner.currentSession();
      await runner.run(async () => {
        expect(runner.currentSession()).toBe(outerSession);
        await connection.insert('orders', { inner: true });
      });
      await connection.insert('orders', { outer: true });
    });
    expect(connection.transactionsStarted).toBe(1);
    expect(connection.docs('orders')).toEqual([{ inner: true }, { outer: true }]);
  });

  it('an error thrown by a joined inner call rolls back the outer writes and reaches the caller unchanged', async () => {
    const { connection, runner } = setup();
    const boom = new Error('inner failed');
    await expect(
      runner.run(async () => {
        await connection.insert('orders', { outer: true });
        await runner.run(async () => {
          await connection.insert('orders', { inner: true });
          throw boom;
        });
      }),
    ).rejects.toBe(boom);
    expect(connection.committed).toEqual([]);
    expect(connection.aborts).toBe(1);
  });

  it('Mandatory throws TransactionPropagationError outside a transaction and joins inside one', async () => {
    const { connection, runner } = setup();
    const mandatory = { propagation: Propagation.Mandatory };
    await expect(runner.run(async () => 1, mandatory, 'Svc.m')).rejects.toThrow(
      TransactionPropagationError,
    );
    await expect(runner.run(async () => 1, mandatory, 'Svc.m')).rejects.toThrow(/Svc\.m/);
    await runner.run(async () => {
      await runner.run(() => connection.insert('orders', { n: 1 }), mandatory);
    });
    expect(connection.transactionsStarted).toBe(1);
    expect(connection.docs('orders')).toHaveLength(1);
  });

  it('Never runs without a transaction, and throws inside one', async () => {
    const { connection, runner } = setup();
    const never = { propagation: Propagation.Never };
    await runner.run(async () => {
      expect(runner.isActive()).toBe(false);
    }, never);
    expect(connection.transactionsStarted).toBe(0);
    const error = await runner.run(() => runner.run(async () => 1, never)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionPropagationError);
    expect((error as TransactionPropagationError).code).toBe('OUTBOX_TRANSACTION_PROPAGATION');
  });

  it('Supports joins a running transaction and otherwise runs without one', async () => {
    const { connection, runner } = setup();
    const supports = { propagation: Propagation.Supports };
    await runner.run(async () => expect(runner.isActive()).toBe(false), supports);
    await runner.run(async () => {
      await runner.run(async () => expect(runner.isActive()).toBe(true), supports);
    });
    expect(connection.transactionsStarted).toBe(1);
  });

  it('joins a transaction the app started itself with connection.transaction()', async () => {
    const { connection, runner } = setup();
    const hookSessions: unknown[] = [];
    runner.beforeCommit(async (attempt) => {
      hookSessions.push(attempt.session);
      await connection.insert('outbox', { eventId: 'e1' });
    });
    let appSession: unknown;
    await connection.transaction(async () => {
      appSession = runner.currentSession();
      expect(runner.isActive()).toBe(true);
      await runner.run(async () => undefined);
    });
    expect(connection.transactionsStarted).toBe(1);
    // The before-commit hooks ran once, in the app's session, and their write committed with it.
    expect(hookSessions).toEqual([appSession]);
    expect(connection.docs('outbox')).toHaveLength(1);
  });

  it('Never throws inside a transaction the app started itself too, running nothing', async () => {
    const { connection, runner } = setup();
    let ran = false;
    const error = await connection
      .transaction(() => runner.run(async () => (ran = true), { propagation: Propagation.Never }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionPropagationError);
    expect(ran).toBe(false);
  });

  it('rejects an unknown propagation value', async () => {
    const { runner } = setup();
    await expect(
      runner.run(async () => 1, { propagation: 'SOMETIMES' as Propagation }),
    ).rejects.toThrow(TransactionPropagationError);
  });
});
