import { mongo } from 'mongoose';
import type { OutboxDoc, OutboxEventRecord } from '../../documents/outbox-event.document';
import {
  ChangeSourceError,
  type ChangeBatch,
  type ChangeCursor,
  type ChangeSource,
  type OutboxChange,
  type ResumeToken,
} from '../ports/change-source';
import { inSlotRange, type SlotRange } from '../ports/partition-layout';
import { streamedToPartition } from './slot-range.filters';

/**
 * Change stream errors after which the stored position can never be used again:
 * 286 ChangeStreamHistoryLost (the oplog rolled past the token), 280 ChangeStreamFatalError,
 * 260 InvalidResumeToken (https://www.mongodb.com/docs/manual/reference/error-codes/).
 */
export const POSITION_LOST_CODES: ReadonlySet<number> = new Set([286, 280, 260]);

export interface StreamChange {
  _id: ResumeToken;
  operationType: string;
  fullDocument?: OutboxEventRecord;
  /** The database and collection of the change. */
  ns?: { db?: string; coll?: string };
}

/**
 * What a stream keeps of the inserts the server sends: those of the outbox collections it was
 * opened for (`follows`) and, with a `range` (one relay partition), those of its slots. The
 * server's `$match` is the filter; this check is what the relay relies on, so that a change
 * of another collection (a relay state document, a tenant's own data) is never taken for an
 * event, whatever a server's filter lets through.
 */
export interface StreamScope {
  follows(ns: StreamChange['ns']): boolean;
  range?: SlotRange;
}

/**
 * Inserts, plus the events that end a collection's stream. An `invalidate` follows a drop or a
 * rename (https://www.mongodb.com/docs/manual/reference/change-events/invalidate/); filtering it
 * out would leave a stream that just closes, so it is matched and turned into a lost position.
 */
const ENDS_OF_STREAM = ['invalidate', 'drop', 'rename', 'dropDatabase'];
const PIPELINE = [{ $match: { operationType: { $in: ['insert', ...ENDS_OF_STREAM] } } }];

/**
 * One partition's stream: the inserts `streamedToPartition(range)` names, filtered by the
 * server, so a relay receives only its partitions' events (and, for an insert without a slot,
 * keeps it when its aggregate's slot is in range: an aggregate's events then reach its
 * partition in commit order, whichever version wrote them); and the events that end the stream.
 */
function pipelineFor(range: SlotRange | undefined): mongo.Document[] {
  if (!range) return PIPELINE;
  return [
    {
      $match: {
        $or: [
          ...streamedToPartition(range).map((inserts) => ({ operationType: 'insert', ...inserts })),
          { operationType: { $in: ENDS_OF_STREAM } },
        ],
      },
    },
  ];
}

export function classify(error: unknown): ChangeSourceError {
  if (error instanceof ChangeSourceError) return error;
  const code = Number((error as { code?: unknown } | null)?.code);
  const message = (error as Error | null)?.message ?? String(error);
  if (POSITION_LOST_CODES.has(code)) {
    return new ChangeSourceError('position-lost', `${message} (code ${code})`, error);
  }
  return new ChangeSourceError('transient', message, error);
}

/**
 * `collection.watch()` on the outbox, majority-committed inserts only (as every change stream);
 * with a `range`, only the inserts of that slot range (one relay partition).
 */
export class MongoChangeSource implements ChangeSource {
  private readonly pipeline: mongo.Document[];

  constructor(
    private readonly outbox: mongo.Collection<OutboxDoc>,
    private readonly options: { batchSize: number; idleMs: number },
    readonly range?: SlotRange,
  ) {
    this.pipeline = pipelineFor(range);
  }

  open(from: ResumeToken | undefined): Promise<ChangeCursor> {
    const { dbName, collectionName } = this.outbox;
    return openChangeCursor(
      (options) => this.outbox.watch<OutboxDoc, StreamChange>(this.pipeline, options),
      this.outbox.db,
      from,
      this.options,
      { follows: (ns) => ns?.db === dbName && ns?.coll === collectionName, range: this.range },
    );
  }
}

/**
 * A change stream opened with `watch` (a collection's, or the client's for the whole
 * deployment): after `from`, or at the majority commit point of `clockDb`'s server, its
 * position fixed by a first round trip before it is returned, so that whatever the relay reads
 * from the collection afterwards (the drain) overlaps with the stream.
 */
export async function openChangeCursor(
  watch: (options: mongo.ChangeStreamOptions) => mongo.ChangeStream<OutboxDoc, StreamChange>,
  clockDb: mongo.Db,
  from: ResumeToken | undefined,
  options: { batchSize: number; idleMs: number },
  scope: StreamScope,
): Promise<ChangeCursor> {
  const start =
    from !== undefined
      ? { startAfter: from as mongo.ResumeToken }
      : await majorityCommitPoint(clockDb);
  const stream = watch({ maxAwaitTimeMS: options.idleMs, batchSize: options.batchSize, ...start });
  const cursor = new MongoChangeCursor(stream, options, scope);
  try {
    await cursor.establish();
  } catch (error) {
    await cursor.close();
    throw classify(error);
  }
  return cursor;
}

/**
 * Where a stream without a stored position starts: the majority commit point
 * (`hello.lastWrite.majorityOpTime`,
 * https://www.mongodb.com/docs/manual/reference/command/hello/#mongodb-data-hello.lastWrite).
 * A stream opened "now" would start at the newest oplog entry; a transaction committed but not
 * yet replicated to a majority would then be before the stream and invisible to the drain's
 * majority reads. Where the server does not report it (mongos), the stream starts now.
 */
export async function majorityCommitPoint(
  db: mongo.Db,
): Promise<{ startAtOperationTime?: mongo.Timestamp }> {
  const hello = await db.command({ hello: 1 }, { readPreference: 'primary' });
  const ts = (hello.lastWrite as { majorityOpTime?: { ts?: unknown } } | undefined)?.majorityOpTime
    ?.ts;
  return ts instanceof mongo.Timestamp ? { startAtOperationTime: ts } : {};
}

/**
 * Reads the driver's stream in the background into a queue of at most `batchSize` changes, so
 * a batch is handed over as soon as changes are there (no wait for the next idle getMore). A
 * read error ends the reader; the next `next()` rethrows it.
 */
export class MongoChangeCursor implements ChangeCursor {
  private readonly queue: OutboxChange[] = [];
  private failure?: ChangeSourceError;
  private closed = false;
  private idle = false;
  private wakeNext?: () => void;
  private wakeReader?: () => void;

  constructor(
    private readonly stream: mongo.ChangeStream<OutboxDoc, StreamChange>,
    private readonly options: { batchSize: number; idleMs: number },
    private readonly scope: StreamScope,
  ) {}

  async establish(): Promise<void> {
    const first = await this.stream.tryNext();
    if (first) this.accept(first);
    void this.read();
  }

  async next(max: number): Promise<ChangeBatch> {
    if (this.queue.length === 0 && !this.failure && !this.idle) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.idleMs);
        timer.unref?.();
        this.wakeNext = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeNext = undefined;
    }
    this.idle = false;
    if (this.queue.length > 0) {
      const changes = this.queue.splice(0, Math.max(1, Math.min(max, this.options.batchSize)));
      this.wakeReader?.();
      return { changes, position: changes[changes.length - 1].token };
    }
    if (this.failure) throw this.failure;
    return { changes: [], position: this.stream.resumeToken ?? undefined };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeReader?.();
    this.wakeNext?.();
    await this.stream.close().catch(() => undefined);
  }

  private accept(change: StreamChange): void {
    if (change.operationType !== 'insert') {
      throw new ChangeSourceError(
        'position-lost',
        `the change stream was invalidated (${change.operationType} of the outbox collection)`,
      );
    }
    if (!this.scope.follows(change.ns)) return;
    // An insert always carries its document; without one the sweep publishes the event.
    const event = change.fullDocument;
    const { range } = this.scope;
    if (!event || (range && !inSlotRange(range, event))) return;
    const database = change.ns?.db;
    this.queue.push(
      database === undefined
        ? { token: change._id, event }
        : { token: change._id, event, database },
    );
  }

  private async read(): Promise<void> {
    try {
      while (!this.closed) {
        if (this.queue.length >= this.options.batchSize) {
          await new Promise<void>((resolve) => (this.wakeReader = resolve));
          this.wakeReader = undefined;
          continue;
        }
        const change = await this.stream.tryNext();
        if (this.closed) return;
        if (change) this.accept(change);
        else if (this.queue.length === 0) this.idle = true;
        if (this.stream.closed) {
          throw new ChangeSourceError('position-lost', 'the change stream closed by itself');
        }
        this.wakeNext?.();
      }
    } catch (error) {
      if (!this.closed) this.failure = classify(error);
      this.wakeNext?.();
    }
  }
}
