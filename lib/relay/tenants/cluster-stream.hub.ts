import { backoffDelay, type BackoffPolicy } from '../../common/backoff';
import { describeError } from '../../common/errors/describe-error';
import { ChangeSourceError } from '../ports/change-source';
import type { ChangeCursor, ChangeSource, ResumeToken } from '../ports/change-source';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { DatabaseSubscription } from './database.subscription';

export interface ClusterStreamHubDeps {
  /** The cluster-wide stream filtered to these databases' outbox collections. */
  source: (databases: readonly string[]) => ChangeSource;
  clock: RelayClock;
  random: () => number;
  logger: RelayLogger;
}

interface Joining {
  database: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One change stream for every followed tenant database, demultiplexed by database: each
 * database's relay term reads its own changes through `source(database)`, as it would read a
 * stream of its own. The hub reads the cluster stream while anyone subscribes, and opens it
 * anew (from where it read up to) when a database joins that its filter does not cover yet.
 * - A transient failure is the hub's own: it reopens from where it read up to, with backoff;
 *   the subscribers only wait.
 * - A lost position fails every subscription with `position-lost`: each database's term drains
 *   its collection and subscribes again (the hub then opens at the current end).
 * - Its position is kept in memory only: a subscription asked to go on from a position (a
 *   stored checkpoint, or a reader's reopen) gets `position-lost`, and recovers from the
 *   collection (drain), which is always correct.
 * - Bounded: it stops reading while any subscription holds `2 x batchSize` unread changes.
 */
export class ClusterStreamHub {
  private epoch = 1;
  private readonly subscriptions = new Map<string, DatabaseSubscription>();
  private readonly joining: Joining[] = [];
  private cursor?: ChangeCursor;
  /** The databases the open stream's filter covers. */
  private covered: ReadonlySet<string> = new Set();
  /** Where the hub has read up to (the token after the last change it routed). */
  private position?: ResumeToken;
  private loop?: Promise<void>;
  private wakeLoop?: () => void;
  private failures = 0;
  /** Databases followed without a subscription (no term): a change of one wakes it. */
  private watched: ReadonlySet<string> = new Set();
  private wake?: (database: string) => boolean;
  /**
   * Subscriptions of databases woken by a change and not subscribed yet: what the stream reads
   * for one meanwhile waits there for its term (up to its bound; the term drains the rest).
   */
  private readonly waking = new Map<string, DatabaseSubscription>();

  constructor(
    private readonly options: { batchSize: number; idleMs: number; backoff: BackoffPolicy },
    private readonly deps: ClusterStreamHubDeps,
  ) {}

  /** The stream of one database's outbox, as its relay term reads it. */
  source(database: string): ChangeSource {
    return { open: (from) => this.subscribe(database, from) };
  }

  /** The databases read now. */
  get following(): readonly string[] {
    return [...this.subscriptions.keys()];
  }

  /**
   * Reads the changes of `databases` too while they have no subscription: the first change of
   * one calls `wake(database)`; when it wakes, that change and the next ones wait for its
   * subscription (its term drains its collection too). Replaces the previous call's databases.
   */
  watch(databases: Iterable<string>, wake: (database: string) => boolean): void {
    const before = this.watched;
    this.watched = new Set(databases);
    this.wake = wake;
    for (const database of this.watched) this.waking.delete(database); // resting again
    if (this.watched.size === 0) return;
    this.startLoop();
    for (const database of this.watched) {
      if (!before.has(database) && !this.covered.has(database)) return this.wakeLoop?.();
    }
  }

  /** Stops reading the watched databases, unless another `wake` watches them now. */
  unwatch(wake: (database: string) => boolean): void {
    if (this.wake !== wake) return;
    this.watched = new Set();
    this.wake = undefined;
    this.waking.clear();
    this.wakeLoop?.();
  }

  /** Whether the open stream reads `database`'s changes. */
  covers(database: string): boolean {
    return this.cursor !== undefined && this.covered.has(database);
  }

  private async subscribe(database: string, from: ResumeToken | undefined): Promise<ChangeCursor> {
    if (from !== undefined) {
      throw new ChangeSourceError(
        'position-lost',
        `the cluster-wide stream keeps no position of database ${database} (a new term, or its reader reopened)`,
      );
    }
    const subscription = this.waking.get(database) ?? this.newSubscription(database);
    this.waking.delete(database);
    this.subscriptions.get(database)?.fail(superseded(database));
    this.subscriptions.set(database, subscription);
    const cursor = subscription.cursor();
    try {
      await this.covering(database);
    } catch (error) {
      await cursor.close();
      throw error;
    }
    return cursor;
  }

  private newSubscription(database: string): DatabaseSubscription {
    return new DatabaseSubscription(
      database,
      this.epoch,
      this.options.batchSize * 2,
      { clock: this.deps.clock, idleMs: this.options.idleMs, taken: () => this.wakeLoop?.() },
      (closed) => this.unsubscribe(closed),
    );
  }

  /** Resolves once the open stream's filter covers `database` (at once when it does). */
  private covering(database: string): Promise<void> {
    if (this.cursor && this.covered.has(database)) return Promise.resolve();
    const joined = new Promise<void>((resolve, reject) =>
      this.joining.push({ database, resolve, reject }),
    );
    this.startLoop();
    this.wakeLoop?.();
    return joined;
  }

  private unsubscribe(subscription: DatabaseSubscription): void {
    if (this.subscriptions.get(subscription.database) === subscription) {
      this.subscriptions.delete(subscription.database);
    }
    this.wakeLoop?.();
  }

  /** Reads while anyone subscribes or watches; started again when someone came as it ended. */
  private startLoop(): void {
    this.loop ??= this.run().finally(() => {
      this.loop = undefined;
      if (this.wanted()) this.startLoop();
    });
  }

  private wanted(): boolean {
    return this.subscriptions.size > 0 || this.watched.size > 0;
  }

  private async run(): Promise<void> {
    do {
      while (this.wanted()) {
        if (!this.cursor || this.uncovered()) {
          await this.reopen();
          continue;
        }
        if ([...this.subscriptions.values()].some((subscription) => subscription.isFull)) {
          await this.pause(this.options.idleMs);
          continue;
        }
        await this.readOnce(this.cursor);
      }
      await this.closeCursor();
    } while (this.wanted()); // a database subscribed (or was watched) while the stream closed
    this.covered = new Set();
    this.waking.clear();
    for (const join of this.joining.splice(0)) join.resolve(); // their cursors closed meanwhile
  }

  private async readOnce(cursor: ChangeCursor): Promise<void> {
    let batch;
    try {
      batch = await cursor.next(this.options.batchSize);
    } catch (error) {
      await this.failed(error);
      return;
    }
    if (cursor !== this.cursor) return; // closed to reopen: what it returned is read again
    for (const change of batch.changes) {
      if (change.database === undefined) continue;
      const subscription = this.subscriptions.get(change.database);
      const waking = this.waking.get(change.database);
      if (subscription) subscription.push(change);
      else if (waking) {
        if (!waking.isFull) waking.push(change);
      } else if (this.watched.has(change.database) && this.wake?.(change.database)) {
        const woken = this.newSubscription(change.database);
        woken.push(change);
        this.waking.set(change.database, woken);
      }
    }
    if (batch.position !== undefined) this.position = batch.position;
    this.healthy();
  }

  /** Opens the stream over the subscribed databases, from where it read up to. */
  private async reopen(): Promise<void> {
    await this.closeCursor();
    const databases = [...new Set([...this.subscriptions.keys(), ...this.watched])].sort();
    try {
      this.cursor = await this.deps.source(databases).open(this.position);
    } catch (error) {
      await this.failed(error);
      return;
    }
    this.covered = new Set(databases);
    for (const join of this.joining.splice(0)) {
      if (this.covered.has(join.database)) join.resolve();
      else this.joining.push(join); // subscribed while it opened: the next opening covers it
    }
  }

  private async failed(error: unknown): Promise<void> {
    await this.closeCursor();
    if (this.subscriptions.size === 0 && this.watched.size === 0) return; // everyone left
    if (error instanceof ChangeSourceError && error.kind === 'position-lost') {
      this.deps.logger.warn(
        `The cluster-wide change stream lost its position (${error.message}); every followed database recovers from its collection.`,
      );
      this.epoch++;
      this.position = undefined;
      for (const subscription of this.subscriptions.values()) subscription.fail(error);
      this.subscriptions.clear();
      this.waking.clear();
      for (const join of this.joining.splice(0)) join.reject(error);
      return;
    }
    this.failures++;
    const delay = backoffDelay(this.failures, this.options.backoff, this.deps.random);
    if (this.failures === 1 || this.failures % 10 === 0) {
      this.deps.logger.warn(
        `The cluster-wide change stream failed (${describeError(error)}); reopened in ${delay} ms from where it read up to` +
          `${this.failures > 1 ? ` (failure ${this.failures} in a row)` : ''}.`,
      );
    }
    await this.pause(delay);
  }

  /** A database joining or watched that the open stream's filter does not cover. */
  private uncovered(): boolean {
    if (this.joining.some((join) => !this.covered.has(join.database))) return true;
    for (const database of this.watched) if (!this.covered.has(database)) return true;
    return false;
  }

  private healthy(): void {
    if (this.failures === 0) return;
    this.deps.logger.log(
      `The cluster-wide change stream is read again after ${this.failures} failure(s).`,
    );
    this.failures = 0;
  }

  /** Waits `ms`, or until a subscriber read, joined or left. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.deps.clock.setTimeout(() => done(), ms);
      const done = (): void => {
        timer.cancel();
        this.wakeLoop = undefined;
        resolve();
      };
      this.wakeLoop = done;
    });
  }

  private async closeCursor(): Promise<void> {
    const cursor = this.cursor;
    this.cursor = undefined;
    this.covered = new Set();
    await cursor?.close();
  }
}

function superseded(database: string): ChangeSourceError {
  return new ChangeSourceError(
    'position-lost',
    `database ${database} was subscribed again (its previous reader is superseded)`,
  );
}
