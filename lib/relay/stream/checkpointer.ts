import { describeError } from '../../common/errors/describe-error';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { RelayStateStore } from '../ports/relay-state.store';
import type { ResumeToken } from '../ports/change-source';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import { CheckpointTracker } from './checkpoint.tracker';

export interface CheckpointerDeps {
  state: RelayStateStore;
  /** This term's fencing number (0 without a lease). */
  fencing: number;
  clock: RelayClock;
  /** Server-time estimate, ms. */
  now: () => number;
  leaseValid: () => boolean;
  logger: RelayLogger;
  metrics: OutboxRelayMetrics;
  /** A newer leader stamped the checkpoint: this term must end. */
  fencedOff: () => void;
}

/**
 * Saves the change stream's resume token, batched (`checkpointEvery`), only up to what the
 * tracker says is safe, only while the lease is valid, and fenced by the term's number.
 */
export class Checkpointer {
  readonly tracker = new CheckpointTracker();
  private saving?: Promise<void>;
  private lastSaveAt: number;
  private lastSaved?: ResumeToken;

  constructor(
    private readonly every: ResolvedRelayOptions['checkpointEvery'],
    private readonly deps: CheckpointerDeps,
  ) {
    this.lastSaveAt = deps.clock.monotonic();
  }

  /** The stored position this term started from, then the last one it saved. */
  get saved(): ResumeToken | undefined {
    return this.lastSaved;
  }

  started(token: ResumeToken | undefined, savedAt: Date | undefined): void {
    this.lastSaved = token;
    if (savedAt) this.deps.metrics.lastCheckpointAt = savedAt.getTime();
  }

  /** Saves if enough is new (or `force`); one write at a time. Never rejects. */
  maybeSave(force = false): Promise<void> {
    if (this.saving) return this.saving;
    const pending = this.tracker.pending();
    if (!pending) return Promise.resolve();
    const due =
      force ||
      this.tracker.unsaved >= this.every.events ||
      this.deps.clock.monotonic() - this.lastSaveAt >= this.every.ms;
    if (!due || !this.deps.leaseValid()) return Promise.resolve();
    this.saving = this.save(pending).finally(() => (this.saving = undefined));
    return this.saving;
  }

  /** Removes the stored token (the position was lost and will be rebuilt from the collection). */
  async clear(): Promise<void> {
    this.tracker.reset();
    this.lastSaved = undefined;
    if (!this.deps.leaseValid()) return;
    try {
      const ok = await this.deps.state.clearCheckpoint(
        this.deps.fencing,
        new Date(this.deps.now()),
      );
      if (!ok) this.deps.fencedOff();
    } catch (error) {
      this.deps.logger.warn(
        `Could not clear the stored position (the next save replaces it): ${describeError(error)}`,
      );
    }
  }

  private async save(pending: { token: ResumeToken; seq: number }): Promise<void> {
    const at = new Date(this.deps.now());
    try {
      const ok = await this.deps.state.saveCheckpoint(pending.token, this.deps.fencing, at);
      if (!ok) {
        this.deps.logger.warn(
          'A newer relay leader owns the checkpoint; this instance stops publishing.',
        );
        this.deps.fencedOff();
        return;
      }
      this.tracker.saved(pending);
      this.lastSaved = pending.token;
      this.lastSaveAt = this.deps.clock.monotonic();
      this.deps.metrics.lastCheckpointAt = at.getTime();
    } catch (error) {
      this.deps.logger.warn(`Could not save the checkpoint (retrying): ${describeError(error)}`);
    }
  }
}
