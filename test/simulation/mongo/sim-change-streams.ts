import type { SimRandom } from '../core/sim.random';
import type { SimScheduler, SimTask } from '../core/sim.scheduler';
import type { SimHistory } from '../world/sim.history';
import type { SimChange, SimDatabase } from './sim-database';
import { mongoErrors } from './sim-mongo.error';
import type { SimMongoError } from './sim-mongo.error';
import { laterToken } from './sim-token';
import type { SimToken } from './sim-token';
import type { SlotRange } from '../../../lib/relay/ports/partition-layout';

/** What a server-side cursor answers. */
export type CursorAnswer =
  | { ok: true; changes: SimChange[]; position: SimToken }
  | { ok: false; kind: 'transient' | 'position-lost'; error: SimMongoError };

/** A stream's server-side filter: a partition's slots, or the tenant databases of a cluster-wide stream. */
export interface CursorFilter {
  range?: SlotRange;
  databases?: readonly string[];
}

interface ServerCursor {
  id: number;
  position: SimToken;
  dead: boolean;
  /** Opened on a position already lost: fails at the first read. */
  lostAtFirstRead: boolean;
  /** Server-side filter on `slot` (a partition's stream). */
  range?: SlotRange;
  /** Server-side filter on `ns.db` (a cluster-wide stream over tenant databases). */
  databases?: ReadonlySet<string | undefined>;
  waiting?: { respond: (answer: CursorAnswer) => void; batchSize: number; timeout: SimTask };
}

/**
 * The server side of change streams on the outbox (inserts only, majority-committed, commit
 * order). A read returns what is there at once, or waits up to the idle time for more
 * (`maxAwaitTimeMS`), then answers empty with the post-batch position. A stepdown kills every
 * cursor; a position older than the oplog window cannot be opened or read on from.
 */
export class SimChangeStreams {
  private readonly cursors = new Map<number, ServerCursor>();
  private nextId = 1;

  constructor(
    private readonly scheduler: SimScheduler,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
    private readonly random: SimRandom,
  ) {
    db.onMajority = () => this.wake();
    db.onStepdown = () => this.killAll();
  }

  get open(): number {
    return [...this.cursors.values()].filter((cursor) => !cursor.dead).length;
  }

  /** Opens after `from` (or at the end of the oplog, committed or not). */
  openCursor(
    from: SimToken | undefined,
    filter: CursorFilter = {},
  ): { ok: true; id: number } | CursorAnswer {
    if (from && this.db.isLost(from)) {
      this.history.countEffect('position-lost');
      if (this.random.chance(0.5)) return this.lost();
      const id = this.register(from, true, filter);
      return { ok: true, id };
    }
    // Without a position: the majority commit point, as the port promises (MongoDB adapter:
    // hello.lastWrite.majorityOpTime). `endOfOplog()` is where a bare `watch()` would start.
    return { ok: true, id: this.register(from ?? this.db.highWater(), false, filter) };
  }

  read(
    id: number,
    batchSize: number,
    idleMs: number,
    respond: (answer: CursorAnswer) => void,
  ): void {
    const cursor = this.cursors.get(id);
    if (!cursor || cursor.dead) {
      respond({ ok: false, kind: 'transient', error: mongoErrors.cursorKilled() });
      return;
    }
    if (cursor.waiting) {
      respond({ ok: false, kind: 'transient', error: mongoErrors.cursorKilled() });
      return;
    }
    cursor.waiting = {
      respond,
      batchSize,
      timeout: this.scheduler.after(idleMs, 'db', `cursor ${id} idle`, () => this.idle(cursor)),
    };
    this.serve(cursor);
  }

  /** Kills one cursor (a cursor error) or closes it (the client's close). */
  kill(id: number, error?: SimMongoError): void {
    const cursor = this.cursors.get(id);
    if (!cursor) return;
    cursor.dead = true;
    this.cursors.delete(id);
    this.answer(cursor, {
      ok: false,
      kind: 'transient',
      error: error ?? mongoErrors.cursorKilled(),
    });
  }

  private register(position: SimToken, lostAtFirstRead: boolean, filter: CursorFilter): number {
    const id = this.nextId++;
    const databases = filter.databases && new Set<string | undefined>(filter.databases);
    this.cursors.set(id, {
      id,
      position,
      dead: false,
      lostAtFirstRead,
      range: filter.range,
      databases,
    });
    return id;
  }

  private lost(): CursorAnswer {
    return { ok: false, kind: 'position-lost', error: mongoErrors.historyLost() };
  }

  private serve(cursor: ServerCursor): void {
    const waiting = cursor.waiting;
    if (!waiting) return;
    if (
      cursor.lostAtFirstRead ||
      (this.db.isLost(cursor.position) && this.db.hasChangesAfter(cursor.position))
    ) {
      if (!cursor.lostAtFirstRead) this.history.countEffect('position-lost');
      cursor.dead = true;
      this.cursors.delete(cursor.id);
      this.answer(cursor, this.lost());
      return;
    }
    const changes = this.db.changesAfter(
      cursor.position,
      waiting.batchSize,
      cursor.range,
      cursor.databases,
    );
    if (changes.length === 0) return;
    cursor.position = changes[changes.length - 1].token;
    this.answer(cursor, { ok: true, changes, position: cursor.position });
  }

  private idle(cursor: ServerCursor): void {
    if (!cursor.waiting) return;
    cursor.position = laterToken(cursor.position, this.db.highWater());
    this.answer(cursor, { ok: true, changes: [], position: cursor.position });
  }

  private answer(cursor: ServerCursor, answer: CursorAnswer): void {
    const waiting = cursor.waiting;
    if (!waiting) return;
    cursor.waiting = undefined;
    this.scheduler.cancel(waiting.timeout);
    waiting.respond(answer);
  }

  private wake(): void {
    for (const cursor of this.cursors.values()) if (cursor.waiting) this.serve(cursor);
  }

  private killAll(): void {
    for (const id of [...this.cursors.keys()]) this.kill(id, mongoErrors.interrupted());
  }
}
