import { Injectable } from '@nestjs/common';
import type { ClientSession, Connection } from 'mongoose';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { throwIfFenced } from '../common/work-fence';
import { TransactionPropagationError } from './errors/transaction-propagation.error';
import { Propagation } from './propagation';
import { isSessionOf, mongooseTransactionSession } from './mongoose-transaction-storage';
import { contextOf, outboxTransactionStorage } from './transaction-context';
import type { OutboxTransactionContext } from './transaction-context';
import type { TransactionalOptions } from './transactional-options.interface';

/** Work of a layer above at the end of an attempt, in its session, before the commit. */
export type BeforeCommitHook = (attempt: OutboxTransactionContext) => Promise<void>;

/**
 * Runs functions in a MongoDB transaction of the app's Mongoose connection, on Mongoose's own
 * AsyncLocalStorage: models used inside pick up the session without passing it around.
 *
 * - A transaction is started with `connection.transaction(fn)`, which retries the whole `fn` on
 *   TransientTransactionError and the commit on UnknownTransactionCommitResult.
 * - Nested calls JOIN the running transaction (never a second, independent one). A call made inside
 *   a transaction the app started itself with `connection.transaction()` joins that one too.
 * - Right before the outermost function of an attempt returns, the before-commit hooks run in its
 *   session, so what they write commits (or aborts) with the data: the write side (events/)
 *   registers the insert of the events emitted in the attempt.
 */
@Injectable()
export class TransactionRunner {
  private readonly beforeCommitHooks: BeforeCommitHook[] = [];

  constructor(private readonly host: OutboxConnectionHost) {}

  /**
   * Runs `hook` at the end of every attempt, in its session, before the commit.
   * @internal registered by `OutboxEmitter`.
   */
  beforeCommit(hook: BeforeCommitHook): void {
    this.beforeCommitHooks.push(hook);
  }

  /** Runs `fn` according to `options.propagation` (default `Required`: join or start). */
  async run<T>(
    fn: () => Promise<T>,
    options: TransactionalOptions = {},
    label?: string,
  ): Promise<T> {
    // Work given up on (an @IdempotentHandler attempt past its timeout) may not start or join one.
    throwIfFenced();
    const propagation = options.propagation ?? Propagation.Required;
    const connection = this.host.connection;
    // A running transaction, ours or one the app started itself: joined, unless `Never`.
    const own = this.ownContext(connection);
    const foreign = own ? undefined : this.foreignSession(connection);
    if (own || foreign) {
      if (propagation === Propagation.Never) {
        throw new TransactionPropagationError(
          propagation,
          'a transaction is already running',
          label,
        );
      }
      return own ? fn() : this.runAttempt(connection, foreign!, fn);
    }
    switch (propagation) {
      case Propagation.Required:
        return connection.transaction(
          (session) => this.runAttempt(connection, session, fn),
          options.transactionOptions,
        );
      case Propagation.Mandatory:
        throw new TransactionPropagationError(
          propagation,
          'no transaction is running; call it from a @Transactional() method or TransactionRunner.run()',
          label,
        );
      case Propagation.Never:
      case Propagation.Supports:
        return fn();
      default:
        throw new TransactionPropagationError(
          String(propagation),
          'is not a known propagation',
          label,
        );
    }
  }

  /** True inside a transaction of this runner's connection. */
  isActive(): boolean {
    return this.currentSession() !== undefined;
  }

  /** The session of the running transaction (or undefined outside one). */
  currentSession(): ClientSession | undefined {
    const connection = this.host.connection;
    return this.ownContext(connection)?.session ?? this.foreignSession(connection);
  }

  /**
   * The attempt context to buffer events in (possibly `closed`: its body already returned), or
   * undefined outside a transaction. Inside a transaction the app started itself
   * (`connection.transaction()` without this runner) there is none; `@Transactional()`/`run()`
   * join such a transaction and make one.
   * @internal used by `OutboxEmitter`.
   */
  currentContext(): OutboxTransactionContext | undefined {
    return contextOf(this.host.connection);
  }

  /** One attempt: a fresh context, run `fn`, the before-commit hooks in the session, close. */
  private async runAttempt<T>(
    connection: Connection,
    session: ClientSession,
    fn: () => Promise<T>,
  ): Promise<T> {
    const context: OutboxTransactionContext = {
      connection,
      session,
      closed: false,
      outer: outboxTransactionStorage.getStore(),
    };
    return outboxTransactionStorage.run(context, async () => {
      try {
        const result = await fn();
        for (const hook of this.beforeCommitHooks) await hook(context);
        return result;
      } finally {
        context.closed = true;
      }
    });
  }

  private ownContext(connection: Connection): OutboxTransactionContext | undefined {
    const context = contextOf(connection);
    return context && !context.closed ? context : undefined;
  }

  /** A transaction started with `connection.transaction()` outside this runner. */
  private foreignSession(connection: Connection): ClientSession | undefined {
    const session = mongooseTransactionSession(connection);
    if (!session || !session.inTransaction()) return undefined;
    // Mongoose's storage is shared by all connections of one Mongoose instance: check the client.
    return isSessionOf(session, connection) ? session : undefined;
  }
}
