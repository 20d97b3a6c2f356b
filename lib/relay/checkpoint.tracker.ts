/**
 * Bookkeeping of "what may be checkpointed": change events get sequence numbers in stream
 * order; a resume token may be saved only when every change event up to it is settled
 * (acknowledged by the broker, dead-lettered, or left pending in the collection with its failure
 * recorded). Settlement happens out of order (aggregates publish in parallel), the safe token
 * only moves forward over a contiguous settled prefix.
 */
export class CheckpointTracker<Token = unknown> {
  private nextSeq = 0;
  private readonly open = new Map<number, { token: Token; settled: boolean }>();
  /** The lowest sequence number not yet settled (everything below is). */
  private floor = 0;
  private safe?: Token;
  private safeSeq = -1;
  private savedSeq = -1;
  private idleToken?: Token;

  /** Registers a change event (in stream order); returns its sequence number. */
  track(token: Token): number {
    const seq = this.nextSeq++;
    this.open.set(seq, { token, settled: false });
    this.idleToken = undefined;
    return seq;
  }

  settle(seq: number): void {
    const entry = this.open.get(seq);
    if (!entry) return;
    entry.settled = true;
    while (this.floor < this.nextSeq) {
      const head = this.open.get(this.floor);
      if (!head?.settled) break;
      this.safe = head.token;
      this.safeSeq = this.floor;
      this.open.delete(this.floor);
      this.floor++;
    }
  }

  /**
   * The stream's own position while it has no unsettled events (MongoDB's post-batch resume
   * token moves on while nothing happens): saving it keeps the checkpoint inside the oplog window.
   */
  observeIdle(token: Token | undefined): void {
    if (token !== undefined && this.open.size === 0) this.idleToken = token;
  }

  /** Change events tracked but not settled. */
  get unsettled(): number {
    return this.open.size;
  }

  /** Settled change events not yet covered by a saved checkpoint. */
  get unsaved(): number {
    return this.safeSeq - this.savedSeq;
  }

  /** The token to save now, or undefined when nothing new is safe. */
  pending(): { token: Token; seq: number } | undefined {
    if (this.open.size === 0 && this.idleToken !== undefined) {
      return { token: this.idleToken, seq: this.safeSeq };
    }
    if (this.safe !== undefined && this.safeSeq > this.savedSeq) {
      return { token: this.safe, seq: this.safeSeq };
    }
    return undefined;
  }

  /** Call after the token returned by `pending()` was written. */
  saved(entry: { token: Token; seq: number }): void {
    this.savedSeq = Math.max(this.savedSeq, entry.seq);
    if (this.idleToken === entry.token) this.idleToken = undefined;
  }

  /** Forget everything (stream reopened from another position). */
  reset(): void {
    this.open.clear();
    this.floor = this.nextSeq;
    this.safe = undefined;
    this.safeSeq = this.nextSeq - 1;
    this.savedSeq = this.nextSeq - 1;
    this.idleToken = undefined;
  }
}
