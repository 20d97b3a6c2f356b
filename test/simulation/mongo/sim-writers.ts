import { eventSlot } from '../../../lib/events/event-slot';
import { Types } from 'mongoose';
import type { SimScheduler } from '../core/sim.scheduler';
import { SIM_EPOCH_MS } from '../process/sim-process';
import type { SimEventData, SimTransactionData, SimWorldData } from '../schedule/schedule.types';
import type { SimDatabase, SimOutboxDoc } from './sim-database';

/** The topic of an aggregate type (the relay's publisher uses `topicPrefix: 'sim.'`). */
export const SIM_TOPIC_PREFIX = 'sim.';

const EVENT_TYPES = ['Created', 'Updated', 'Shipped', 'Cancelled'];

/**
 * The application's writers: each commits its transactions one after the other (ids and
 * `occurredAt` are made at the transaction's start with the writer's own, skewed clock; the
 * commit is at its end). A commit during an election is retried once a primary is back.
 * Without `aggregateSequence`, each aggregate belongs to one writer (its ids carry the
 * writer's number), so `_id` order is commit order for it.
 *
 * Scheduled events get `availableAt` = the server's clock when the row is written (the
 * transaction's start) + `delayMs`; the write side's order rule and the cancellations are
 * applied by the server at commit (`SimDatabase.commit`).
 */
export class SimWriters {
  private readonly queues: SimTransactionData[][];
  private readonly counters: number[];
  private busy = 0;
  private remaining: number;
  /** eventIds of the events written so far, by `txIndex:eventIndex` (what cancellations name). */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly scheduler: SimScheduler,
    private readonly db: SimDatabase,
    private readonly world: SimWorldData,
    transactions: readonly SimTransactionData[],
    /** `txIndex:eventIndex` of events too large for the broker. */
    private readonly oversize: ReadonlySet<string>,
    /** `txIndex:eventIndex` of events the broker fails on for a while (kafka-poison-event). */
    private readonly poison: ReadonlySet<string> = new Set(),
    /** Tenants family: the database of a transaction's tenant (its events carry the tenant). */
    private readonly databaseOf?: (tenant: number) => string,
  ) {
    this.queues = Array.from({ length: world.writers }, () => []);
    transactions.forEach((transaction, index) => {
      const writer = transaction.writer % world.writers;
      this.queues[writer].push({ ...transaction, writer, index } as SimTransactionData & {
        index: number;
      });
    });
    this.queues.forEach((queue) => queue.sort((a, b) => a.at - b.at));
    this.counters = Array.from({ length: world.writers }, (_, writer) => 0x100000 * (writer + 1));
    this.remaining = transactions.length;
  }

  /** Whether every transaction committed. */
  get done(): boolean {
    return this.remaining === 0 && this.busy === 0;
  }

  start(): void {
    this.queues.forEach((_, writer) => this.next(writer));
  }

  private next(writer: number): void {
    const transaction = this.queues[writer].shift() as
      (SimTransactionData & { index: number }) | undefined;
    if (!transaction) return;
    this.busy++;
    this.scheduler.at(transaction.at, `writer-${writer}`, 'begin', () => {
      const database =
        this.databaseOf && transaction.tenant !== undefined
          ? this.databaseOf(transaction.tenant)
          : undefined;
      const docs = transaction.events.map((event, index) => {
        const doc = this.makeDoc(
          writer,
          event,
          this.oversize.has(`${transaction.index}:${index}`),
          this.poison.has(`${transaction.index}:${index}`)
            ? `${transaction.index}:${index}`
            : undefined,
        );
        this.written.set(`${transaction.index}:${index}`, doc.eventId);
        // The tenant is the database's name (`databaseOf`'s default).
        return database === undefined ? doc : { ...doc, tenant: database };
      });
      const exempt = new Set(
        transaction.events.flatMap((event, index) =>
          event.waitForScheduled === false ? [index] : [],
        ),
      );
      const commit = (): void => {
        if (this.db.electionActive()) {
          this.scheduler.at(this.db.electionEndsAt + 1, `writer-${writer}`, 'commit retry', commit);
          return;
        }
        this.db.commit(docs, { exempt, cancels: this.cancelsOf(transaction), writer, database });
        this.busy--;
        this.remaining--;
        this.next(writer);
      };
      this.scheduler.after(transaction.durationMs, `writer-${writer}`, 'commit', commit);
    });
  }

  /** The events a transaction cancels, by eventId as written so far (see `Schedule.cancels`). */
  private cancelsOf(
    transaction: SimTransactionData,
  ): Array<{ eventId?: string; label: string }> | undefined {
    return transaction.cancels?.map(({ tx, event }) => {
      const label = `${tx}:${event}`;
      return { eventId: this.written.get(label), label };
    });
  }

  private writesWithoutSlot(writer: number): boolean {
    const { unslottedWriters, unslottedUntilMs } = this.world;
    if (!unslottedWriters?.includes(writer)) return false;
    return unslottedUntilMs === undefined || this.scheduler.now < unslottedUntilMs;
  }

  private makeDoc(
    writer: number,
    event: SimEventData,
    oversize: boolean,
    poison: string | undefined,
  ): SimOutboxDoc {
    const wall = SIM_EPOCH_MS + this.scheduler.now + (this.world.writerSkewsMs[writer] ?? 0);
    const counter = this.counters[writer]++;
    const seconds = Math.floor(wall / 1000)
      .toString(16)
      .padStart(8, '0');
    const processBytes = (0x5a5a5a5a00 + writer * 0x1f3d5b79).toString(16).padStart(10, '0');
    const hex = `${seconds}${processBytes.slice(-10)}${(counter & 0xffffff).toString(16).padStart(6, '0')}`;
    const type = this.world.topics[event.type % this.world.topics.length].type;
    const aggregate = event.aggregate % this.world.aggregatesPerType;
    const shared = this.world.aggregateSequence || this.world.sharedAggregates;
    const aggregateId = shared ? `A${aggregate}` : `W${writer}A${aggregate}`;
    const bytes = oversize ? this.world.messageMaxBytes + 64 : event.payloadBytes;
    return {
      _id: new Types.ObjectId(hex),
      eventId: `evt-${writer}-${counter.toString(16)}`,
      aggregateType: type,
      aggregateId,
      eventType: EVENT_TYPES[counter % EVENT_TYPES.length],
      payload: {
        n: counter,
        ...(poison ? { poison } : {}),
        pad: 'x'.repeat(Math.max(0, bytes)),
      },
      headers:
        counter % 3 === 0
          ? { traceparent: `00-${hex}${hex.slice(0, 8)}-${hex.slice(0, 16)}-01` }
          : undefined,
      occurredAt: new Date(wall),
      status: 'pending',
      attempts: 0,
      // A writer of a version before slots (`unslottedWriters`, until it is upgraded) has none.
      slot: this.writesWithoutSlot(writer) ? undefined : eventSlot(type, aggregateId),
      ...(event.delayMs === undefined
        ? {}
        : { availableAt: new Date(this.db.serverDate().getTime() + event.delayMs) }),
    };
  }
}
