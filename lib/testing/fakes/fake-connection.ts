import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession, Connection } from 'mongoose';
import type { OutboxConnectionHost } from '../../common/outbox-connection.host';
import type { NewOutboxEvent } from '../../documents/outbox-event.document';
import type { OutboxEventWriter } from '../../events/outbox-event.writer';
import type { CancelScheduledResult, CancelView } from '../../events/schedule/cancel-result';
import type { ScheduleQuery, ScheduleSnapshot } from '../../events/schedule/schedule.resolver';
import { cancelInMemory, scheduleSnapshotOf } from '../in-memory-schedule';
import { TransactionRunner } from '../../transaction/transaction.runner';

/**
 * Test doubles for unit specs: NOT a MongoDB. A fake Mongoose connection whose `transaction(fn)`
 * behaves like Mongoose's (runs `fn` in Mongoose's AsyncLocalStorage with a session, retries it
 * when it throws an error labelled TransientTransactionError, "commits" the session's writes only
 * when `fn` resolves), and a fake outbox writer recording rows in the session.
 */

export class TransientTransactionError extends Error {
  hasErrorLabel(label: string): boolean {
    return label === 'TransientTransactionError';
  }
}

export interface FakeWrite {
  collection: string;
  doc: Record<string, unknown>;
}

export class FakeSession {
  active = false;
  writes: FakeWrite[] = [];
  /** Called once this attempt commits (dropped when it aborts). */
  commitHooks: Array<() => void> = [];
  /** What this attempt cancelled, by eventId (it sees its own writes before it commits). */
  ownCancels = new Map<string, CancelView>();
  constructor(readonly client: object) {}
  inTransaction(): boolean {
    return this.active;
  }
  onCommit(hook: () => void): void {
    this.commitHooks.push(hook);
  }
}

/** The fake session the writer call `what` runs in; throws when it runs outside a transaction. */
export function fakeSessionOf(session: ClientSession, what: string): FakeSession {
  const fake = session as unknown as FakeSession;
  if (!fake.inTransaction()) throw new Error(`${what} outside a transaction`);
  return fake;
}

export class FakeConnection {
  readonly client = {};
  readyState = 1;
  /** What `hello` answers; default: a replica set member. */
  hello: Record<string, unknown> = { isWritablePrimary: true, setName: 'rs0' };
  /** Everything committed, in commit order. */
  readonly committed: FakeWrite[] = [];
  attempts = 0;
  transactionsStarted = 0;
  aborts = 0;
  /** Attempt numbers (global, 1-based) whose domain writes throw a transient error. */
  failAttempts = new Set<number>();
  /** Attempt numbers whose commit fails with a transient error (after the body returned). */
  failCommitAttempts = new Set<number>();
  readonly settings = new Map<string, unknown>();
  /** Mongoose's global instance, as far as the library uses it. */
  readonly base = {
    transactionAsyncLocalStorage: undefined as
      AsyncLocalStorage<{ session: FakeSession }> | undefined,
    /** Global schema plugins registered (Mongoose applies them to models compiled later). */
    plugins: [] as unknown[],
    plugin: (fn: unknown) => this.base.plugins.push(fn),
    get: (key: string): unknown => this.settings.get(key),
    set: (key: string, value: unknown): void => {
      this.settings.set(key, value);
      if (key === 'transactionAsyncLocalStorage') {
        this.base.transactionAsyncLocalStorage = value ? new AsyncLocalStorage() : undefined;
      }
    },
  };
  readonly db = { command: async (_cmd: object) => this.hello };
  /**
   * Models other parts of the library create at bootstrap (e.g. the consumer's): inert stand-ins
   * whose every method resolves to undefined. The write side itself goes through the fake writer.
   */
  readonly models: Record<string, unknown> = {};

  constructor(options: { alsEnabled?: boolean } = {}) {
    if (options.alsEnabled !== false) this.base.set('transactionAsyncLocalStorage', true);
  }

  get asConnection(): Connection {
    return this as unknown as Connection;
  }

  model(name: string): unknown {
    return (this.models[name] ??= inert());
  }

  getClient(): object {
    return this.client;
  }

  async asPromise(): Promise<this> {
    return this;
  }

  /** Like Mongoose's `connection.transaction`: retries `fn` on transient errors. */
  async transaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    this.transactionsStarted++;
    const session = new FakeSession(this.client);
    for (let tries = 0; ; tries++) {
      this.attempts++;
      session.active = true;
      session.writes = [];
      session.commitHooks = [];
      session.ownCancels = new Map();
      try {
        const storage = this.base.transactionAsyncLocalStorage;
        const run = () => fn(session as unknown as ClientSession);
        const result = storage ? await storage.run({ session }, run) : await run();
        if (this.failCommitAttempts.has(this.attempts)) {
          throw new TransientTransactionError(
            `commit failed (simulated) on attempt ${this.attempts}`,
          );
        }
        this.committed.push(...session.writes);
        session.active = false;
        for (const hook of session.commitHooks) hook();
        return result;
      } catch (error) {
        session.active = false;
        session.writes = [];
        this.aborts++;
        const transient = (error as TransientTransactionError).hasErrorLabel?.(
          'TransientTransactionError',
        );
        if (transient && tries < 5) continue;
        throw error;
      }
    }
  }

  /** A domain write, as a Mongoose model would do it: in the ALS session if there is one. */
  async insert(collection: string, doc: Record<string, unknown>): Promise<void> {
    await Promise.resolve();
    const session = this.base.transactionAsyncLocalStorage?.getStore()?.session;
    if (session?.active) {
      if (this.failAttempts.has(this.attempts)) {
        throw new TransientTransactionError(
          `WriteConflict (simulated) on attempt ${this.attempts}`,
        );
      }
      session.writes.push({ collection, doc });
    } else {
      this.committed.push({ collection, doc });
    }
  }

  docs(collection: string): Record<string, unknown>[] {
    return this.committed.filter((w) => w.collection === collection).map((w) => w.doc);
  }
}

/** A callable object whose every property is another one, and whose calls resolve to undefined. */
function inert(): unknown {
  const target = function () {
    return Promise.resolve(undefined);
  };
  return new Proxy(target, {
    get: (_t, key) => (key === 'then' ? undefined : inert()),
  });
}

/**
 * Records outbox rows in the fake session (committed with it); counts insert calls. Keeps the
 * committed rows (`rows`) for the schedule read and cancel, on its own clock (`now`).
 */
export class FakeOutboxWriter implements OutboxEventWriter {
  insertCalls = 0;
  indexesEnsured = 0;
  scheduleReads: ScheduleQuery[] = [];
  /** Committed rows, as the outbox collection would hold them. */
  readonly rows: NewOutboxEvent[] = [];
  /** The "server" clock of the schedule read and cancel. */
  now: () => Date = () => new Date();

  async readSchedule(query: ScheduleQuery, session: ClientSession): Promise<ScheduleSnapshot> {
    this.scheduleReads.push(query);
    fakeSessionOf(session, 'FakeOutboxWriter: schedule read');
    await Promise.resolve();
    return scheduleSnapshotOf(this.rows, query, this.now());
  }

  async cancel(eventId: string, session: ClientSession): Promise<CancelScheduledResult> {
    const fake = fakeSessionOf(session, 'FakeOutboxWriter: cancel');
    await Promise.resolve();
    return cancelInMemory(this.rows, eventId, this.now(), fake);
  }

  async insert(events: NewOutboxEvent[], session: ClientSession): Promise<void> {
    this.insertCalls++;
    const fake = fakeSessionOf(session, 'FakeOutboxWriter: insert');
    await Promise.resolve();
    fake.writes.push(
      ...events.map((doc) => ({
        collection: 'outbox',
        doc: { ...doc } as Record<string, unknown>,
      })),
    );
    const rows = events.map((doc) => ({ ...doc }));
    fake.onCommit(() => this.rows.push(...rows));
  }

  async ensureIndexes(): Promise<void> {
    this.indexesEnsured++;
  }
}

/** A `TransactionRunner` over a `FakeConnection` and a `FakeOutboxWriter`, for unit specs. */
export function fakeTransactionRunner(): {
  connection: FakeConnection;
  writer: FakeOutboxWriter;
  runner: TransactionRunner;
} {
  const connection = new FakeConnection();
  const writer = new FakeOutboxWriter();
  const runner = new TransactionRunner({
    connection: connection.asConnection,
  } as OutboxConnectionHost);
  return { connection, writer, runner };
}
