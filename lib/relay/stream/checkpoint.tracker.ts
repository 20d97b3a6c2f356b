import type { ResumeToken } from '../ports/change-source';

/**
 * Bookkeeping of "what may be checkpointed": change events get sequence numbers in stream
 * order; a position may be saved only when every change up to it is settled (acknowledged by
 * the broker, dead-lettered, or left pending with a durable marker). Settlement happens out of
 * order (aggregates publish in parallel); the safe position only moves forward over a
 * contiguous settled prefix.
 *
 * A barrier (`track(undefined)`) holds every later position back until it settles without
 * being a position itself: the drain puts one before the stream's first change, so no position
 * is saved before every drained event is settled.
 */
export class CheckpointTracker {
  private nextSeq = 0;
  private readonly open = new Map<number, { token: ResumeToken | undefined; settled: boolean }>();
  /** The lowest sequence number not yet settled (everything below is). */
  private floor = 0;
  private safe?: ResumeToken;
  private safeSeq = -1;
  private savedSeq = -1;
  private idleToken?: ResumeToken;

  /** Registers a change (in stream order), or a barrier; returns its sequence number. */
  track(token: ResumeToken | undefined): number {
    const seq = this.nextSeq++;
    this.open.set(seq, { token, settled: false });
    this.idleToken = undefined;
    return seq;
  }

  /** Settling twice, or a sequence number from before `reset()`, does nothing. */
  settle(seq: number): void {
    const entry = this.open.get(seq);
    if (!entry) return;
    entry.settled = true;
    while (this.floor < this.nextSeq) {
      const head = this.open.get(this.floor);
      if (!head?.settled) break;
      if (head.token !== undefined) {
        this.safe = head.token;
        this.safeSeq = this.floor;
      }
      this.open.delete(this.floor);
      this.floor++;
    }
  }

  /**
   * The stream's own position while it has no unsettled changes (MongoDB's post-batch resume
   * token moves on while nothing happens): saving it keeps the checkpoint inside the oplog window.
   */
  observeIdle(token: ResumeToken | undefined): void {
    if (token !== undefined && this.open.size === 0) this.idleToken = token;
  }

  /** Settled changes not yet covered by a saved checkpoint. */
  get unsaved(): number {
    return this.safeSeq - this.savedSeq;
  }

  /** The newest safe position, saved or not (to reopen the stream from after a failure). */
  latest(): ResumeToken | undefined {
    return this.pending()?.token ?? this.safe;
  }

  /** The position to save now, or undefined when nothing new is safe. */
  pending(): { token: ResumeToken; seq: number } | undefined {
    if (this.open.size === 0 && this.idleToken !== undefined) {
      return { token: this.idleToken, seq: this.safeSeq };
    }
    if (this.safe !== undefined && this.safeSeq > this.savedSeq) {
      return { token: this.safe, seq: this.safeSeq };
    }
    return undefined;
  }

  /** Call after the position returned by `pending()` was written. */
  saved(entry: { token: ResumeToken; seq: number }): void {
    this.savedSeq = Math.max(this.savedSeq, entry.seq);
    if (this.idleToken === entry.token) this.idleToken = undefined;
  }

  /** Forgets everything (the stream reopens from another position). */
  reset(): void {
    this.open.clear();
    this.floor = this.nextSeq;
    this.safe = undefined;
    this.safeSeq = this.nextSeq - 1;
    this.savedSeq = this.nextSeq - 1;
    this.idleToken = undefined;
  }
}
