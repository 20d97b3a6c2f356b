import { ChangeSourceError } from '../ports/change-source';
import type { ChangeBatch, ChangeCursor, OutboxChange } from '../ports/change-source';
import type { RelayClock, RelayTimer } from '../ports/relay-clock';

/**
 * A position of one database in a `ClusterStreamHub`: the count of its changes handed out since
 * it subscribed. It means nothing beyond that subscription (a reader reopening from it, or a
 * stored one, recovers from the collection).
 */
export interface HubPosition {
  readonly hubEpoch: number;
  readonly database: string;
  readonly seq: number;
}

/**
 * The changes of one followed database, as the hub routes them, waiting to be read by that
 * database's relay term (through `cursor()`). Bounded by the hub: it stops reading the cluster
 * stream while any subscription holds `limit` changes or more.
 */
export class DatabaseSubscription {
  private readonly queue: OutboxChange[] = [];
  private received = 0;
  /** The seq of the last change handed out. */
  delivered = 0;
  private failure?: ChangeSourceError;
  private wakeReader?: () => void;
  private ended = false;

  constructor(
    readonly database: string,
    readonly epoch: number,
    private readonly limit: number,
    private readonly deps: { clock: RelayClock; idleMs: number; taken: () => void },
    private readonly onClose: (subscription: DatabaseSubscription) => void,
  ) {}

  get isFull(): boolean {
    return this.queue.length >= this.limit;
  }

  get isOpen(): boolean {
    return !this.ended && this.failure === undefined;
  }

  /** A change of this database, read from the cluster stream. */
  push(change: OutboxChange): void {
    if (!this.isOpen) return;
    this.received++;
    this.queue.push({ ...change, token: this.position(this.received) });
    this.wakeReader?.();
  }

  /** The cluster stream failed for good: the next read rejects with `error`. */
  fail(error: ChangeSourceError): void {
    this.failure ??= error;
    this.queue.length = 0;
    this.wakeReader?.();
  }

  cursor(): ChangeCursor {
    return { next: (max) => this.next(max), close: () => this.close() };
  }

  private async next(max: number): Promise<ChangeBatch> {
    if (this.queue.length === 0 && this.isOpen) await this.waitForChanges();
    if (this.failure) throw this.failure;
    if (this.queue.length > 0) {
      const changes = this.queue.splice(0, Math.max(1, max));
      this.delivered += changes.length;
      this.deps.taken();
      return { changes, position: changes[changes.length - 1].token };
    }
    return { changes: [], position: this.position(this.delivered) };
  }

  private waitForChanges(): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: RelayTimer | undefined = undefined;
      const done = (): void => {
        timer?.cancel();
        this.wakeReader = undefined;
        resolve();
      };
      this.wakeReader = done;
      timer = this.deps.clock.setTimeout(done, this.deps.idleMs);
    });
  }

  private close(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      this.queue.length = 0;
      this.wakeReader?.();
      this.onClose(this);
    }
    return Promise.resolve();
  }

  private position(seq: number): HubPosition {
    return { hubEpoch: this.epoch, database: this.database, seq };
  }
}
