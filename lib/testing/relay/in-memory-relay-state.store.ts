import type { ResumeToken } from '../../relay/ports/change-source';
import type {
  LeaseGrant,
  RelayStateStore,
  StoredCheckpoint,
} from '../../relay/ports/relay-state.store';

/** The relay state port in memory, with the same conditions as the MongoDB store; server time is `serverNow()`. */
export class InMemoryRelayStateStore implements RelayStateStore {
  lease?: LeaseGrant;
  checkpoint: StoredCheckpoint & { fencing?: number } = {};
  serverNow: () => number = Date.now;
  failNext = 0;
  readonly saves: Array<{ token: ResumeToken; fencing: number }> = [];

  /** `counter`: fencing numbers from a counter shared by several leases (default: this one's own). */
  constructor(private readonly counter?: { next: number }) {}

  private check(): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('simulated database error');
    }
  }

  async serverTime(): Promise<Date> {
    this.check();
    return new Date(this.serverNow());
  }

  async acquireLease(
    owner: string,
    serverNow: Date,
    expiresAt: Date,
  ): Promise<LeaseGrant | undefined> {
    this.check();
    const current = this.lease;
    if (current && current.owner !== owner && current.expiresAt > serverNow) return undefined;
    const fencing = this.counter ? ++this.counter.next : (current?.fencing ?? 0) + 1;
    this.lease = { owner, expiresAt, fencing };
    return { ...this.lease };
  }

  async renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean> {
    this.check();
    if (this.lease?.owner !== owner || this.lease.fencing !== fencing) return false;
    this.lease = { ...this.lease, expiresAt };
    return true;
  }

  async releaseLease(owner: string, fencing: number): Promise<void> {
    this.check();
    if (this.lease?.owner === owner && this.lease.fencing === fencing) {
      this.lease = { ...this.lease, expiresAt: new Date(0) };
    }
  }

  async claimCheckpoint(fencing: number): Promise<StoredCheckpoint | undefined> {
    this.check();
    if ((this.checkpoint.fencing ?? 0) > fencing) return undefined;
    this.checkpoint.fencing = fencing;
    return { token: this.checkpoint.token, savedAt: this.checkpoint.savedAt };
  }

  async saveCheckpoint(token: ResumeToken, fencing: number, at: Date): Promise<boolean> {
    this.check();
    if ((this.checkpoint.fencing ?? 0) > fencing) return false;
    this.checkpoint = { token, fencing, savedAt: at };
    this.saves.push({ token, fencing });
    return true;
  }

  async clearCheckpoint(fencing: number, at: Date): Promise<boolean> {
    this.check();
    if ((this.checkpoint.fencing ?? 0) > fencing) return false;
    this.checkpoint = { fencing, savedAt: at };
    return true;
  }
}
