/** A lease as stored: who holds it, until when, and its fencing number. */
export interface LeaseGrant {
  owner: string;
  fencing: number;
  expiresAt: Date;
}

/**
 * The leader's view of its lease. It considers itself leader only while the lease is valid with
 * a safety margin (a third of the renewal interval), so a paused process stops publishing
 * before another instance can take over. Storage checks (owner + fencing filters) are the
 * authority; this only decides locally when to stop early and when to renew.
 */
export class LeaseTracker {
  private grant?: LeaseGrant;
  private renewedAt = 0;

  constructor(
    readonly owner: string,
    private readonly durationMs: number,
    private readonly renewMs: number,
  ) {}

  acquired(grant: LeaseGrant, now: number): void {
    if (grant.owner !== this.owner) throw new Error('lease granted to another owner');
    this.grant = grant;
    this.renewedAt = now;
  }

  renewed(expiresAt: Date, now: number): void {
    if (this.grant) {
      this.grant = { ...this.grant, expiresAt };
      this.renewedAt = now;
    }
  }

  lost(): void {
    this.grant = undefined;
  }

  get fencing(): number | undefined {
    return this.grant?.fencing;
  }

  isLeader(now: number): boolean {
    if (!this.grant) return false;
    return now < this.grant.expiresAt.getTime() - Math.ceil(this.renewMs / 3);
  }

  shouldRenew(now: number): boolean {
    return this.grant !== undefined && now - this.renewedAt >= this.renewMs;
  }

  /** The expiry to write when acquiring or renewing at `now`. */
  expiryFrom(now: number): Date {
    return new Date(now + this.durationMs);
  }
}

/** Whether `current` (the stored lease, if any) may be taken by `owner` at `now`. */
export function canAcquire(current: LeaseGrant | undefined, owner: string, now: number): boolean {
  return !current || current.owner === owner || current.expiresAt.getTime() <= now;
}
