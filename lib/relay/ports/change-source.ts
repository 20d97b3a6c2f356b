import type { OutboxEventRecord } from '../../documents/outbox-event.document';

/** An opaque position in the change stream (MongoDB: a resume token). */
export type ResumeToken = unknown;

/** One inserted outbox document as the change stream delivers it. */
export interface OutboxChange {
  /** The position just after this change. */
  token: ResumeToken;
  /** The inserted document, as committed. */
  event: OutboxEventRecord;
  /** The database it was inserted in (set by a cluster-wide stream, which the relay demultiplexes). */
  database?: string;
}

/** What one read of the change stream returned. */
export interface ChangeBatch {
  /**
   * Majority-committed inserts, in commit order, at most the relay's `batchSize`. May be empty
   * (nothing new within the idle time).
   */
  changes: OutboxChange[];
  /**
   * The stream's position after this batch, also when it is empty (MongoDB's post-batch resume
   * token): saving it keeps an idle relay's checkpoint inside the oplog window.
   */
  position?: ResumeToken;
}

/**
 * Why a change stream cannot go on from where it is:
 * - `position-lost`: the stored position can never be resumed (MongoDB: `POSITION_LOST_CODES`),
 *   the stream was invalidated (collection dropped or renamed), or the cursor closed by itself.
 *   The relay recovers from the collection.
 * - `transient`: anything else (network, election, timeouts). The relay reopens from its last
 *   safe position, with backoff, for as long as it takes.
 */
export type ChangeSourceFailure = 'position-lost' | 'transient';

export class ChangeSourceError extends Error {
  override readonly name = 'ChangeSourceError';

  constructor(
    readonly kind: ChangeSourceFailure,
    message: string,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}

/** An open change stream. */
export interface ChangeCursor {
  /**
   * The next changes (at most `max`), waiting at most the source's idle time. Rejects with
   * `ChangeSourceError` (or any error, taken as `transient`); after a rejection the cursor is
   * unusable: close it.
   */
  next(max: number): Promise<ChangeBatch>;
  /** Never rejects. */
  close(): Promise<void>;
}

/** The outbox collection's change stream, filtered to inserts (MongoDB: `collection.watch()`). */
export interface ChangeSource {
  /**
   * Opens the stream just after `from`. When `from` is undefined, at a position no later than
   * the majority commit point when `open` resolves: every insert a majority read could not see
   * yet is delivered by the stream (so the drain that follows misses nothing). A position that
   * cannot be resumed may fail here or at the first `next()`.
   */
  open(from: ResumeToken | undefined): Promise<ChangeCursor>;
}
