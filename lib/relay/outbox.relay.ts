import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import type { mongo } from 'mongoose';
import type { OutboxEventRecord } from '../common/envelope';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_PUBLISHER, OUTBOX_RESOLVED_OPTIONS } from '../common/outbox.constants';
import type { ResolvedOutboxOptions } from '../options/resolved-options';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import { CheckpointTracker } from './checkpoint.tracker';
import { LeaseTracker } from './lease.tracker';
import { MongoRelayStore } from './mongo-relay.store';
import { describeError } from '../common/errors/describe-error';
import { RelayEngine } from './relay.engine';
import { OutboxRelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';

/** Change stream errors after which the stored position cannot be used again. */
export const POSITION_LOST_CODES: ReadonlySet<number> = new Set([
  286, // ChangeStreamHistoryLost: the oplog rolled past the token
  280, // ChangeStreamFatalError
  260, // InvalidResumeToken
]);

interface InsertChange {
  _id: unknown;
  operationType: string;
  documentKey?: { _id: unknown };
  /** The inserted document (always present on an insert event). */
  fullDocument?: OutboxEventRecord;
}

/** One leadership term: everything that is thrown away when the lease is lost or the relay stops. */
interface Term {
  fencing: number;
  active: boolean;
  engine: RelayEngine;
  tracker: CheckpointTracker<unknown>;
  stream?: mongo.ChangeStream<OutboxEventRecord, InsertChange>;
  loop?: Promise<void>;
  sweepTimer?: NodeJS.Timeout;
  checkpointTimer?: NodeJS.Timeout;
  saving?: Promise<void>;
  lastSaveAt: number;
  /** Token the stream resumes from (last checkpoint, then last safe position). */
  resumeToken?: unknown;
  draining: boolean;
  /** Change events received in this term (to tell a flaky stream from an unusable position). */
  delivered: number;
}

class PositionLostError extends Error {}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * The relay: follows the outbox collection's change stream (inserts only), publishes pending
 * events through the `OutboxPublisher`, marks them published, and checkpoints the resume
 * token once the broker acknowledged everything before it. The collection is the source of
 * truth: a periodic sweep publishes what is still pending after `sweepGraceMs`, and a lost
 * stream position (oplog rolled over, invalidate) is recovered by draining the collection.
 * One instance publishes at a time (lease with fencing number in `relayState`).
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly relayOptions: ResolvedRelayOptions | undefined;
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private store?: MongoRelayStore;
  private lease?: LeaseTracker;
  private leaseTimer?: NodeJS.Timeout;
  private leaseTick?: Promise<void>;
  private term?: Term;
  private running = false;
  private publisherConnected = false;
  private indexesReady = false;

  constructor(
    @Inject(OUTBOX_RESOLVED_OPTIONS) private readonly options: ResolvedOutboxOptions,
    private readonly connectionHost: OutboxConnectionHost,
    readonly metrics: OutboxRelayMetrics,
    @Optional() @Inject(OUTBOX_PUBLISHER) private readonly publisher: OutboxPublisher | null,
  ) {
    this.relayOptions = options.relay === false ? undefined : options.relay;
  }

  /** Whether this instance currently holds the lease and publishes. */
  get isLeader(): boolean {
    return this.term?.active === true;
  }

  get isRunning(): boolean {
    return this.running;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.relayOptions?.autoStart) await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Starts the relay (idempotent). Resolves once it tried to become leader; work goes on in the background. */
  async start(): Promise<void> {
    const relay = this.relayOptions;
    if (this.running) return;
    if (!relay || !this.publisher) {
      this.logger.warn('The relay is disabled (relay: false); start() does nothing.');
      return;
    }
    this.running = true;
    const db = this.connectionHost.connection.db;
    if (!db)
      throw new Error(
        'The Mongoose connection is not open yet; start the relay after it connected.',
      );
    this.store = new MongoRelayStore(db, this.options.collections, relay.name);
    this.lease = new LeaseTracker(this.owner, relay.lease.durationMs, relay.lease.renewMs);
    if (this.options.createIndexes && !this.indexesReady) {
      await this.store.ensureIndexes(relay.retentionSeconds);
      this.indexesReady = true;
    }
    this.connectPublisher();
    await this.tickLease();
    this.leaseTimer = setInterval(
      () => {
        if (!this.leaseTick)
          this.leaseTick = this.tickLease().finally(() => (this.leaseTick = undefined));
      },
      relay.lease.enabled ? relay.lease.renewMs : 1000,
    );
    this.leaseTimer.unref?.();
  }

  /**
   * Stops taking new work, lets in-flight publishes finish (up to `shutdownTimeoutMs`, then
   * abandons them: they stay pending), saves the checkpoint, releases the lease and disconnects
   * the publisher. Never throws.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    try {
      if (this.leaseTimer) clearInterval(this.leaseTimer);
      this.leaseTimer = undefined;
      await this.leaseTick?.catch(() => undefined);
      await this.endTerm('the relay is stopping', this.relayOptions?.shutdownTimeoutMs ?? 10_000);
      if (this.publisher && this.publisherConnected) {
        this.publisherConnected = false;
        await this.publisher.disconnect();
      }
    } catch (error) {
      this.logger.error(`Error while stopping the relay (ignored): ${describeError(error)}`);
    }
  }

  // ------------------------------------------------------------------ lease

  private connectPublisher(): void {
    const publisher = this.publisher as OutboxPublisher;
    publisher.connect().then(
      () => (this.publisherConnected = true),
      (error: unknown) => {
        this.publisherConnected = true; // publish() reconnects; disconnect() must still run
        this.logger.warn(
          `The publisher could not connect yet (${describeError(error)}); events wait and are retried.`,
        );
      },
    );
  }

  private async tickLease(): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    const store = this.store as MongoRelayStore;
    const lease = this.lease as LeaseTracker;
    if (!this.running) return;
    try {
      if (!relay.lease.enabled) {
        if (!this.term) await this.beginTerm(0);
        return;
      }
      const now = Date.now();
      if (this.term) {
        if (!lease.isLeader(now)) {
          await this.endTerm('the lease could not be renewed in time', relay.shutdownTimeoutMs);
          return;
        }
        const expiresAt = lease.expiryFrom(now);
        if (await store.renewLease(this.owner, lease.fencing as number, expiresAt)) {
          lease.renewed(expiresAt, now);
        } else {
          lease.lost();
          await this.endTerm('another instance took the lease', relay.shutdownTimeoutMs);
        }
        return;
      }
      const grant = await store.acquireLease(this.owner, lease.expiryFrom(now), new Date(now));
      if (grant && this.running) {
        lease.acquired(grant, now);
        this.logger.log(
          `This instance (${this.owner}) is the relay leader (fencing ${grant.fencing}).`,
        );
        await this.beginTerm(grant.fencing);
      }
    } catch (error) {
      this.logger.warn(`Relay lease check failed (retrying): ${describeError(error)}`);
    }
  }

  // ------------------------------------------------------------------ terms

  private async beginTerm(fencing: number): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    const store = this.store as MongoRelayStore;
    const lease = this.lease as LeaseTracker;
    const idempotent = relay.kafka?.idempotent === true && !relay.publisher;
    const engine = new RelayEngine(
      store,
      this.publisher as OutboxPublisher,
      {
        batchSize: relay.batchSize,
        maxInFlight: relay.maxInFlight,
        maxAttempts: relay.maxAttempts,
        backoff: relay.backoff,
        publishConcurrency: idempotent
          ? 1
          : Math.min(4, Math.max(1, Math.floor(relay.maxInFlight / relay.batchSize))),
        canPublish: () => !relay.lease.enabled || lease.isLeader(Date.now()),
      },
      this.metrics,
    );
    const term: Term = {
      fencing,
      active: true,
      engine,
      tracker: new CheckpointTracker<unknown>(),
      lastSaveAt: Date.now(),
      draining: false,
      delivered: 0,
    };
    this.term = term;
    this.metrics.leader = true;
    try {
      const checkpoint = await store.loadCheckpoint();
      term.resumeToken = checkpoint?.token;
      if (checkpoint) this.metrics.lastCheckpointAt = checkpoint.savedAt.getTime();
      for (const retrying of await store.findRetryingAggregates(100_000)) {
        engine.holdUntil(retrying, retrying.retryAt);
      }
    } catch (error) {
      this.logger.warn(`Could not read the relay state (retrying): ${describeError(error)}`);
      await this.endTerm('start-up failed', 0);
      return;
    }
    term.loop = this.runStream(term);
    term.sweepTimer = setInterval(() => void this.sweep(term), relay.sweepIntervalMs);
    term.sweepTimer.unref?.();
    term.checkpointTimer = setInterval(
      () => void this.checkpoint(term, false),
      Math.min(relay.checkpointEvery.ms, 1000),
    );
    term.checkpointTimer.unref?.();
  }

  private async endTerm(reason: string, timeoutMs: number): Promise<void> {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    term.active = false;
    this.metrics.leader = false;
    if (term.sweepTimer) clearInterval(term.sweepTimer);
    if (term.checkpointTimer) clearInterval(term.checkpointTimer);
    this.logger.log(`Relay leadership ends: ${reason}.`);
    await term.stream?.close().catch(() => undefined);
    const finished = await term.engine.close(timeoutMs);
    if (!finished) {
      this.logger.warn(
        `Publishes still in flight after ${timeoutMs} ms were abandoned; their events stay pending and are sent again later.`,
      );
    }
    await term.loop?.catch(() => undefined);
    await term.saving?.catch(() => undefined);
    await this.checkpoint(term, true);
    const lease = this.lease as LeaseTracker;
    if (this.relayOptions?.lease.enabled && lease.fencing !== undefined) {
      try {
        await (this.store as MongoRelayStore).releaseLease(this.owner, lease.fencing);
      } catch (error) {
        this.logger.warn(
          `Could not release the lease (it expires by itself): ${describeError(error)}`,
        );
      }
      lease.lost();
    }
  }

  // ------------------------------------------------------------------ change stream

  private async runStream(term: Term): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    let failures = 0;
    while (term.active) {
      const deliveredBefore = term.delivered;
      try {
        await this.followStream(term);
        failures = 0;
      } catch (error) {
        if (!term.active) break;
        if (
          error instanceof PositionLostError ||
          POSITION_LOST_CODES.has(Number((error as { code?: unknown }).code))
        ) {
          this.metrics.recoveries++;
          this.logger.error(
            `The change stream position is lost (${describeError(error)}). Recovering from the outbox collection: ` +
              'every pending event is published from there, then the stream is reopened from now. Nothing is lost, ' +
              'but check that the oplog window is larger than the longest relay downtime.',
          );
          term.resumeToken = undefined;
          term.tracker.reset();
          try {
            await (this.store as MongoRelayStore).clearCheckpoint(term.fencing);
          } catch {
            /* the next checkpoint overwrites it */
          }
          continue;
        }
        if (term.delivered > deliveredBefore) failures = 0;
        failures++;
        if (failures >= 3 && term.resumeToken !== undefined && term.tracker.unsettled === 0) {
          // The stored position keeps failing to open: treat it as lost rather than loop forever.
          this.logger.error(
            `The change stream cannot be resumed from the stored position (${describeError(error)}); treating it as lost.`,
          );
          this.metrics.recoveries++;
          term.resumeToken = undefined;
          term.tracker.reset();
          failures = 0;
          continue;
        }
        const delay = Math.min(
          relay.backoff.maxMs,
          relay.backoff.initialMs * 2 ** Math.min(failures, 10),
        );
        this.logger.warn(
          `The change stream failed (${describeError(error)}); reopening in ${delay} ms.`,
        );
        await term.stream?.close().catch(() => undefined);
        term.stream = undefined;
        term.resumeToken = term.tracker.pending()?.token ?? term.resumeToken;
        term.tracker.reset();
        await sleep(delay);
      }
    }
  }

  /** Opens the stream (resuming, or from now after draining the collection) and follows it. */
  private async followStream(term: Term): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    const store = this.store as MongoRelayStore;
    const pipeline = [{ $match: { operationType: 'insert' } }];
    const resume = term.resumeToken;
    const stream = store.outboxCollection.watch<OutboxEventRecord, InsertChange>(pipeline, {
      maxAwaitTimeMS: relay.idleMs,
      batchSize: relay.batchSize,
      ...(resume !== undefined ? { startAfter: resume as mongo.ResumeToken } : {}),
    });
    term.stream = stream;
    const queue: InsertChange[] = [];
    // Establishes the position (and surfaces a lost token) before anything else.
    const first = await stream.tryNext();
    if (first) queue.push(first);
    if (resume === undefined) {
      await this.drain(term);
    }
    let wake: (() => void) | undefined;
    let readerError: unknown;
    let readerDone = false;
    const reader = (async () => {
      try {
        while (term.active) {
          if (queue.length >= relay.batchSize * 2 || term.tracker.unsettled >= relay.maxInFlight) {
            await sleep(5);
            continue;
          }
          const change = await stream.tryNext();
          if (!term.active) break;
          if (change) {
            if (change.operationType === 'invalidate')
              throw new PositionLostError('the change stream was invalidated');
            queue.push(change);
          } else if (queue.length === 0) {
            term.tracker.observeIdle(stream.resumeToken);
          }
          wake?.();
        }
      } catch (error) {
        if (term.active) readerError = error;
      } finally {
        readerDone = true;
        wake?.();
      }
    })();
    try {
      while (term.active) {
        if (queue.length === 0) {
          if (readerDone) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, relay.idleMs).unref?.();
          });
          wake = undefined;
          continue;
        }
        await term.engine.waitForCapacity();
        if (!term.active) break;
        const batch = queue.splice(0, relay.batchSize);
        await this.offerChanges(term, batch);
        void this.checkpoint(term, false);
      }
    } finally {
      await reader.catch(() => undefined);
    }
    if (readerError) throw readerError;
    if (term.active && stream.closed) throw new PositionLostError('the change stream closed');
  }

  private async offerChanges(term: Term, batch: InsertChange[]): Promise<void> {
    term.delivered += batch.length;
    const seqs = batch.map((change) => term.tracker.track(change._id));
    const ids = batch.map((change) => change.documentKey?._id).filter((id) => id !== undefined);
    // The collection is the source of truth: only what is still pending is published, with its
    // current relay fields (attempts, retry time, errors). The body comes from the change event.
    const states = await (this.store as MongoRelayStore).findPendingState(ids);
    const byId = new Map(states.map((state) => [String(state._id), state]));
    batch.forEach((change, index) => {
      const seq = seqs[index];
      const settle = (): void => {
        term.tracker.settle(seq);
        if (
          term.tracker.unsaved >= (this.relayOptions as ResolvedRelayOptions).checkpointEvery.events
        ) {
          void this.checkpoint(term, false);
        }
      };
      const state = byId.get(String(change.documentKey?._id));
      // Without a body (never for an insert), the sweep publishes it from the collection.
      if (state && change.fullDocument)
        term.engine.offer({ ...change.fullDocument, ...state }, settle);
      else settle();
    });
  }

  /** Publishes every pending event from the collection (first start, lost position). */
  private async drain(term: Term): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    const store = this.store as MongoRelayStore;
    const until = new Date();
    let total = 0;
    term.draining = true;
    this.logger.log(
      'No usable stream position: publishing pending events from the outbox collection first.',
    );
    try {
      // Aggregate by aggregate, each in its order (not global _id order: with several writer
      // processes, _id order within one second is not insertion order). Pages, not one long
      // cursor: a broker outage may hold the drain longer than a cursor's idle timeout.
      let after: OutboxEventRecord | undefined;
      while (term.active) {
        await term.engine.waitForCapacity();
        const page = await store.findPendingPage(after, until, relay.batchSize);
        if (page.length === 0) break;
        for (const event of page) term.engine.offer(event);
        total += page.length;
        after = page[page.length - 1];
      }
      await term.engine.drained();
    } finally {
      term.draining = false;
    }
    if (total > 0) this.logger.log(`Drained ${total} pending events from the outbox collection.`);
  }

  // ------------------------------------------------------------------ sweep + checkpoint

  private async sweep(term: Term): Promise<void> {
    const relay = this.relayOptions as ResolvedRelayOptions;
    const store = this.store as MongoRelayStore;
    if (!term.active) return;
    try {
      const now = Date.now();
      const stats = await store.pendingStats();
      this.metrics.pendingCount = stats.count;
      this.metrics.oldestPendingAgeMs = stats.oldestOccurredAt
        ? Math.max(0, now - stats.oldestOccurredAt.getTime())
        : 0;
      if (term.draining || stats.count === 0) return;
      const stale = await store.findStaleAggregates(
        new Date(now - relay.sweepGraceMs),
        new Date(now),
        relay.batchSize,
      );
      let started = 0;
      for (const ref of stale) {
        if (!term.active) break;
        if (term.engine.requestCatchUp(ref)) started++;
      }
      if (started > 0) {
        this.logger.warn(
          `Sweep: ${started} aggregate(s) had events pending for more than ${relay.sweepGraceMs} ms; publishing them from the collection.`,
        );
      }
    } catch (error) {
      this.logger.warn(`Sweep failed (retrying next time): ${describeError(error)}`);
    }
  }

  private checkpoint(term: Term, force: boolean): Promise<void> {
    if (term.saving) return term.saving;
    const relay = this.relayOptions as ResolvedRelayOptions;
    const pending = term.tracker.pending();
    if (!pending) return Promise.resolve();
    const due =
      force ||
      term.tracker.unsaved >= relay.checkpointEvery.events ||
      Date.now() - term.lastSaveAt >= relay.checkpointEvery.ms;
    if (!due) return Promise.resolve();
    const save = async (): Promise<void> => {
      const at = new Date();
      try {
        const ok = await (this.store as MongoRelayStore).saveCheckpoint(
          pending.token,
          term.fencing,
          at,
        );
        if (!ok) {
          this.logger.warn(
            'A newer relay leader wrote the checkpoint; this instance stops publishing.',
          );
          (this.lease as LeaseTracker).lost();
          if (this.term === term) void this.endTerm('fenced off by a newer leader', 0);
          return;
        }
        term.tracker.saved(pending);
        term.resumeToken = pending.token;
        term.lastSaveAt = at.getTime();
        this.metrics.lastCheckpointAt = at.getTime();
      } catch (error) {
        this.logger.warn(`Could not save the checkpoint (retrying): ${describeError(error)}`);
      }
    };
    term.saving = save().finally(() => (term.saving = undefined));
    return term.saving;
  }
}
