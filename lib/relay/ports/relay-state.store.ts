import type { ResumeToken } from './change-source';

/** A lease as granted: who holds it, its fencing number, and its expiry on the server's clock. */
export interface LeaseGrant {
  owner: string;
  fencing: number;
  expiresAt: Date;
}

export interface StoredCheckpoint {
  token?: ResumeToken;
  savedAt?: Date;
}

/**
 * The relay's own state in `collections.relayState`: the leader lease and the resume-token
 * checkpoint. Every time in it is the database server's time: the relay reads it with
 * `serverTime()` and never compares its own clock with a stored time.
 */
export interface RelayStateStore {
  /** The database server's current time (MongoDB: `hello.localTime` on the primary). */
  serverTime(): Promise<Date>;
  /**
   * Takes the lease when there is none, it is ours, or it expired at or before `serverNow` (a
   * time read from the server just before, so it has passed there too), and sets its expiry;
   * the fencing number goes up by one. Undefined when another instance holds it.
   */
  acquireLease(owner: string, serverNow: Date, expiresAt: Date): Promise<LeaseGrant | undefined>;
  /** Moves our lease's expiry; false when it is no longer ours (owner or fencing changed). */
  renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean>;
  /** Ends our lease now, so another instance may take over at once. */
  releaseLease(owner: string, fencing: number): Promise<void>;
  /**
   * Makes the checkpoint ours: stamps it with `fencing` unless a higher number is on it, and
   * returns what is stored (undefined: a newer leader owns it). After this, no checkpoint write
   * of an older leader lands.
   */
  claimCheckpoint(fencing: number): Promise<StoredCheckpoint | undefined>;
  /** Writes the token unless a newer leader stamped the checkpoint; false means fenced off. */
  saveCheckpoint(token: ResumeToken, fencing: number, at: Date): Promise<boolean>;
  /** Removes the token (the position was lost); same fencing as `saveCheckpoint`. */
  clearCheckpoint(fencing: number, at: Date): Promise<boolean>;
}
