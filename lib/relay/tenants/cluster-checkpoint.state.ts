import type { ResumeToken } from '../ports/change-source';
import type { LeaseGrant, RelayStateStore, StoredCheckpoint } from '../ports/relay-state.store';

/**
 * The checkpoint of a tenant database read through the cluster-wide stream, whose position
 * lives in memory only (see `ClusterStreamHub`): claiming it claims the relay's own checkpoint
 * document once per term (so a fenced-off leader still learns it at start), and returns no
 * token (the database drains its pending events, then follows); saves write nothing.
 */
export class ClusterCheckpointState implements RelayStateStore {
  private claimed?: { fencing: number; result: Promise<StoredCheckpoint | undefined> };

  constructor(private readonly relay: RelayStateStore) {}

  claimCheckpoint(fencing: number): Promise<StoredCheckpoint | undefined> {
    if (this.claimed?.fencing !== fencing) {
      const result = this.relay
        .claimCheckpoint(fencing)
        .then((stored) => (stored ? { savedAt: stored.savedAt } : undefined));
      result.catch(() => (this.claimed = undefined)); // claimed again next time
      this.claimed = { fencing, result };
    }
    return this.claimed.result;
  }

  saveCheckpoint(_token: ResumeToken, _fencing: number, _at: Date): Promise<boolean> {
    return Promise.resolve(true);
  }

  clearCheckpoint(_fencing: number, _at: Date): Promise<boolean> {
    return Promise.resolve(true);
  }

  serverTime(): Promise<Date> {
    return this.relay.serverTime();
  }

  acquireLease(owner: string, serverNow: Date, expiresAt: Date): Promise<LeaseGrant | undefined> {
    return this.relay.acquireLease(owner, serverNow, expiresAt);
  }

  renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean> {
    return this.relay.renewLease(owner, fencing, expiresAt);
  }

  releaseLease(owner: string, fencing: number): Promise<void> {
    return this.relay.releaseLease(owner, fencing);
  }
}
