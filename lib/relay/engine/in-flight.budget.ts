import { eventMemoryBytes } from './event-memory';

/** Room for `events` more events, taken from an `InFlightBudget` before reading them. */
export interface Reservation {
  readonly events: number;
}

interface Waiter {
  events: number;
  resolve: (reservation: Reservation) => void;
}

/** Reads that may go before an idle read (`reserveIdle`) before it waits as any other. */
const IDLE_PASSES = 16;

/**
 * Several budgets that share one bound (a partitioned relay: one budget per owned partition).
 * See `InFlightShares` (`in-flight.shares.ts`).
 */
export interface InFlightPool {
  /** The share's own limits now (they change as partitions come and go). */
  limitOf(share: InFlightBudget): { events: number; bytes: number };
  /** Whether the whole pool has room for `events` more events. */
  allows(events: number): boolean;
  /** The share held or reserved less: others may fit now. */
  freed(share: InFlightBudget): void;
  /** The share closed: what it held no longer counts. */
  detach(share: InFlightBudget): void;
}

/**
 * The bound on what the relay holds in memory: events queued or being published, in count and
 * in bytes of memory (each event charged `eventMemoryBytes` of its wire size: its decoded
 * document, its message and its bookkeeping, see `event-memory.ts`). Every read that brings events into memory (change stream, drain, catch-up) reserves
 * its page size first, so the count never exceeds `maxEvents`. Bytes are known only once read,
 * so the reads in flight count at the average size seen so far: a read starts only while the
 * bytes held and so expected stay below `maxBytes`, and asks for no more events than fit in the
 * rest (at least one), so the bytes exceed `maxBytes` by at most what the reads in flight bring
 * beyond that estimate. (Sized from the bytes held alone, reads started together each took the
 * whole room: four catch-up pages held four times `maxInFlightBytes`.)
 */
export class InFlightBudget {
  private heldEvents = 0;
  private heldBytes = 0;
  private reservedEvents = 0;
  private waiters: Waiter[] = [];
  /** An idle read waiting (`reserveIdle`), and how many reads may still go before it. */
  private idle?: Waiter & { passes: number };
  private idleGrantQueued = false;
  private closed = false;
  /** Running average of what an event costs in memory (bytes), for sizing reads; from 1 kB on the wire. */
  private averageBytes = eventMemoryBytes(1024);

  constructor(
    private readonly ownMaxEvents: number,
    private readonly ownMaxBytes: number,
    /** A bound shared with other budgets, on top of this one's (which the pool then sets). */
    private readonly pool?: InFlightPool,
  ) {}

  get maxEvents(): number {
    return this.pool ? this.pool.limitOf(this).events : this.ownMaxEvents;
  }

  get maxBytes(): number {
    return this.pool ? this.pool.limitOf(this).bytes : this.ownMaxBytes;
  }

  get events(): number {
    return this.heldEvents;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  /** Held plus reserved: what may be in memory once every started read returns. */
  get committed(): number {
    return this.heldEvents + this.reservedEvents;
  }

  /** Bytes held, plus what the reads in flight are expected to bring (at the average size). */
  private get expectedBytes(): number {
    return this.heldBytes + this.reservedEvents * this.averageBytes;
  }

  private fits(events: number): boolean {
    return (
      this.committed + events <= this.maxEvents &&
      this.expectedBytes < this.maxBytes &&
      (this.pool?.allows(events) ?? true)
    );
  }

  /** How many of `events` to read now: what fits in the bytes left at the average size, at least one. */
  private sized(events: number): number {
    const room = Math.floor((this.maxBytes - this.expectedBytes) / this.averageBytes);
    return Math.max(1, Math.min(events, room));
  }

  /**
   * What a read that will most likely only wait (\`reserveIdle\`) asks for: a page, at most half
   * the events, so that a page of another read (\`pageBesideIdle\`) fits beside it.
   */
  idleSize(page: number): number {
    return Math.max(1, Math.min(page, Math.ceil(this.maxEvents / 2)));
  }

  /** What a collection read asks for: a page, or what fits beside an idle read (at least one). */
  pageBesideIdle(page: number): number {
    return Math.max(1, Math.min(page, this.maxEvents - this.idleSize(page)));
  }

  /** A reservation now (possibly smaller than asked, see the class), or undefined when there is no room. */
  tryReserve(events: number): Reservation | undefined {
    if (this.closed || this.waiters.length > 0 || !this.fits(events)) return undefined;
    return this.grant(events);
  }

  /**
   * Like `reserve`, for a read that will most likely only wait (the change stream once it has
   * caught up) and so would hold its room for nothing: while it waits, the other reads go
   * first, also those asking right after room was freed (in the same turn, such as the next
   * page of a lane that just published), up to `IDLE_PASSES` of them; then it waits as any
   * other. (Granted in turn, a single event of room went to the idle read after each page, and
   * a catch-up read one page per idle time.)
   */
  reserveIdle(events: number): Promise<Reservation> {
    if (this.closed) return Promise.resolve({ events: 0 });
    if (this.idle) return this.reserve(events);
    const now = this.tryReserve(events);
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      this.idle = { events, resolve, passes: IDLE_PASSES };
    });
  }

  private grant(events: number): Reservation {
    const granted = this.sized(events);
    this.reservedEvents += granted;
    if (this.idle && --this.idle.passes <= 0) {
      // It let enough reads go: it waits first in line now.
      this.waiters.unshift(this.idle);
      this.idle = undefined;
    }
    return { events: granted };
  }

  /** Waits (first come, first served) until `events` fit. After `close()`, resolves with nothing. */
  reserve(events: number): Promise<Reservation> {
    const now = this.tryReserve(events);
    if (now) return Promise.resolve(now);
    if (this.closed) return Promise.resolve({ events: 0 });
    return new Promise((resolve) => this.waiters.push({ events, resolve }));
  }

  /** Turns the reservation into `count` held events of `bytes` in total (at most its size), giving back the rest. */
  settleReservation(reservation: Reservation, count: number, bytes: number): void {
    this.reservedEvents -= reservation.events;
    this.heldEvents += count;
    this.heldBytes += bytes;
    if (count > 0)
      this.averageBytes = Math.max(1, Math.round(this.averageBytes * 0.8 + (bytes / count) * 0.2));
    this.wake();
    if (count < reservation.events) this.pool?.freed(this);
  }

  /** Events leave memory (published, dropped, dead-lettered). */
  release(events: number, bytes: number): void {
    this.heldEvents = Math.max(0, this.heldEvents - events);
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    this.wake();
    this.pool?.freed(this);
  }

  /** Wakes every waiter with an empty reservation; later calls get empty ones at once. */
  close(): void {
    this.closed = true;
    const waiters = this.idle ? [...this.waiters, this.idle] : this.waiters;
    this.waiters = [];
    this.idle = undefined;
    for (const waiter of waiters) waiter.resolve({ events: 0 });
    this.pool?.detach(this);
  }

  /** Grants waiting reservations that fit now (the pool calls it when another share freed room). */
  wake(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0].events)) {
      const waiter = this.waiters.shift() as Waiter;
      waiter.resolve(this.grant(waiter.events));
    }
    if (this.idle && !this.idleGrantQueued && this.waiters.length === 0) {
      // After the reads that ask in this turn (see `reserveIdle`).
      this.idleGrantQueued = true;
      queueMicrotask(() => this.grantIdle());
    }
  }

  private grantIdle(): void {
    this.idleGrantQueued = false;
    const idle = this.idle;
    if (!idle || this.closed || this.waiters.length > 0 || !this.fits(idle.events)) return;
    this.idle = undefined;
    idle.resolve(this.grant(idle.events));
  }
}
