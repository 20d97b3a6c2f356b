import { describeError } from '../../common/errors/describe-error';
import { RelayEngine } from '../engine/relay.engine';
import type { LeaseKeeper } from '../lease/lease.keeper';
import { everyInTurn, type RelayJob, type RelayTimer } from '../ports/relay-clock';
import { CollectionDrain } from '../recovery/collection.drain';
import { PendingSweeper } from '../recovery/pending.sweeper';
import { loadRetryingAggregates } from '../recovery/retrying-aggregates.loader';
import type { RelayNodeDeps } from '../relay-node.deps';
import type { ResolvedRelayOptions } from '../relay.options';
import { DueReader } from '../scheduled/due.reader';
import { ChangeStreamFollower } from '../stream/change-stream.follower';
import { Checkpointer } from '../stream/checkpointer';
import { FencedWrites } from './fenced.writes';
import type { TermEnd } from './term-end';

/**
 * One leadership term: the engine, the stream follower, the due reader (scheduled events), the
 * sweep and the checkpoint, wired together with this term's fencing number, and thrown away as
 * a whole when the lease ends.
 */
export class RelayTerm {
  /** Takes new work (reads, publishes); false once the term ends. */
  private active = true;
  /** Aborted when the term ends: every sleep and wait of the term ends with it. */
  private readonly stopping = new AbortController();
  /**
   * Writes while the lease is valid: also while `end()` settles what the broker answered
   * during the stop, until the last checkpoint is saved.
   */
  private settling = true;
  /** Set while `end()` writes the last checkpoint of a term that still held its lease. */
  private finalSave = false;
  private readonly engine: RelayEngine;
  private readonly checkpointer: Checkpointer;
  private readonly follower: ChangeStreamFollower;
  private readonly sweeper: PendingSweeper;
  private readonly due: DueReader;
  private sweep?: RelayJob;
  private checkpointTimer?: RelayTimer;
  private running?: Promise<void>;

  constructor(
    private readonly options: ResolvedRelayOptions,
    private readonly deps: RelayNodeDeps,
    private readonly lease: LeaseKeeper,
    /** The lease's fencing number, or null without a lease. */
    readonly fencing: number | null,
    private readonly ended: (why: TermEnd) => void,
  ) {
    const { clock, loggers, metrics, publisher, outbox } = deps;
    const random = deps.random ?? Math.random;
    const now = () => lease.serverNow();
    const writes = new FencedWrites(outbox, fencing, () => this.settling && lease.isValid());
    this.engine = new RelayEngine(options, {
      outbox,
      writes,
      publisher,
      clock,
      now,
      dueBy: () => this.due.dueBy(),
      canPublish: () => this.active && lease.isValid(),
      takingWork: () => this.active,
      leaseValid: () => lease.isValid(),
      random,
      logger: loggers('RelayEngine'),
      holdsLogger: loggers('RelayDestinations'),
      metrics,
      budget: deps.budget?.(),
    });
    this.due = new DueReader(
      { recheckMs: Math.min(options.sweepIntervalMs, 5000), retryMs: options.backoff.initialMs },
      {
        ...{ outbox, engine: this.engine, clock, logger: loggers('RelayScheduled') },
        active: () => this.active,
      },
    );
    this.checkpointer = new Checkpointer(options.checkpointEvery, {
      state: deps.state,
      fencing: fencing ?? 0,
      clock,
      now,
      leaseValid: () => (this.active || this.finalSave) && lease.isValid(),
      logger: loggers('RelayCheckpoint'),
      metrics,
      fencedOff: () => this.endItself('fenced-off'),
    });
    this.follower = new ChangeStreamFollower(options, {
      changes: deps.changes,
      outbox,
      engine: this.engine,
      drain: new CollectionDrain(outbox, this.engine, options.batchSize, loggers('RelayDrain')),
      checkpointer: this.checkpointer,
      clock,
      random,
      logger: loggers('RelayStream'),
      metrics,
      stopped: this.stopping.signal,
      scheduled: (availableAt) => this.due.noteDue(availableAt),
    });
    this.sweeper = new PendingSweeper(options, {
      outbox,
      writes,
      engine: this.engine,
      now,
      logger: loggers('RelaySweep'),
      metrics,
      scheduledDue: (at) => this.due.noteDue(at),
    });
  }

  /** Starts the term's work in the background. */
  start(): void {
    this.running = this.run().catch((error: unknown) => {
      this.deps
        .loggers('RelayTerm')
        .error(`The relay term failed unexpectedly and ends: ${describeError(error)}`);
      this.endItself('failed');
    });
  }

  private async run(): Promise<void> {
    const { clock, state, outbox, loggers } = this.deps;
    const logger = loggers('RelayTerm');
    const activeNow = () => this.active;
    let from;
    try {
      if (!this.lease.isValid()) return this.endItself('failed');
      const stored = await state.claimCheckpoint(this.fencing ?? 0);
      if (!this.active) return;
      if (!stored) return this.endItself('fenced-off');
      this.checkpointer.started(stored.token, stored.savedAt);
      from = stored.token;
      const retrying = await loadRetryingAggregates(outbox, this.engine, activeNow);
      if (retrying > 0) {
        logger.log(
          `${retrying} aggregate(s) wait for a retry; they are read from the collection when due.`,
        );
      }
    } catch (error) {
      if (this.active) {
        logger.warn(
          `Could not start publishing (retried with the next lease renewal): ${describeError(error)}`,
        );
        this.endItself('failed');
      }
      return;
    }
    if (!this.active) return;
    this.due.start();
    const name = `nestjs-outbox:relay:${this.options.name}`;
    this.sweep = everyInTurn(clock, `${name}:sweep`, this.options.sweepIntervalMs, () =>
      this.sweeper.sweep(this.follower.state === 'draining'),
    );
    // `maybeSave` takes one save at a time itself (the follower calls it too).
    this.checkpointTimer = clock.every(
      `${name}:checkpoint`,
      Math.min(this.options.checkpointEvery.ms, 1000),
      () => void this.checkpointer.maybeSave(),
    );
    await this.follower.run(from, activeNow);
  }

  private endItself(why: TermEnd): void {
    if (!this.active) return;
    this.stopTakingWork();
    this.ended(why);
  }

  private stopTakingWork(): void {
    this.active = false;
    this.stopping.abort();
  }

  /**
   * Stops the term: no new work; publishes under way finish and what the broker answered is
   * settled (published marks, failure records, dead letters), up to `timeoutMs`, then what is
   * left is abandoned and stays pending; then the checkpoint is saved if the lease still allows
   * it. Writes are refused once it returns (the caller releases the lease next), and at any
   * time the lease is no longer valid.
   */
  async end(timeoutMs: number): Promise<boolean> {
    const leaseWasValid = this.active && this.lease.isValid();
    this.stopTakingWork();
    const sweep = this.sweep?.stop();
    this.checkpointTimer?.cancel();
    const due = this.due.stop();
    try {
      await this.follower.stop();
      const finished = await this.engine.close(timeoutMs);
      await this.running?.catch(() => undefined);
      await sweep;
      await due;
      if (leaseWasValid) {
        this.finalSave = true;
        await this.checkpointer.maybeSave(true);
        this.finalSave = false;
      }
      return finished;
    } finally {
      this.settling = false;
    }
  }

  status() {
    return {
      stream: this.follower.state,
      streamError: this.follower.error,
      ...this.engine.status(),
    };
  }
}
