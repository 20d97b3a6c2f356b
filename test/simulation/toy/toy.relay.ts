import { toKafkaMessage } from '../../../lib/publisher/kafka-message.mapper';
import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import { ChangeSourceError } from '../../../lib/relay/ports/change-source';
import type { ChangeCursor, ResumeToken } from '../../../lib/relay/ports/change-source';
import type { RelayStatus } from '../../../lib/relay/relay.status';
import type { RelayUnderTest, SimRelayPorts } from '../world/relay-under-test';

/** Bugs the toy relay can be built with, to show that the invariants catch them. */
export interface ToyBugs {
  /** Saves the checkpoint before the broker acknowledged (breaks checkpoint safety). */
  checkpointBeforeAck?: boolean;
  /** Writes outbox documents without a fence (breaks fencing). */
  unfenced?: boolean;
  /** Publishes every change twice (breaks "duplicates only with a cause"). */
  publishTwice?: boolean;
  /** Never sweeps (misses what the stream did not deliver: breaks liveness under faults). */
  noSweep?: boolean;
  /** Never drains (misses what was committed before the stream opened: breaks liveness). */
  noDrain?: boolean;
  /** Gives up the stream at its first error, saying nothing (breaks "no silent stop"). */
  streamGivesUp?: boolean;
  /** Publishes each drained page newest first (breaks per-aggregate order). */
  drainNewestFirst?: boolean;
  /** Asks its change stream for 2 x maxInFlight events at once (breaks bounded memory). */
  readsPastBound?: boolean;
  /** Never checks its lease: keeps its term and publishes after a renewal failed (breaks fencing). */
  noLeaseCheck?: boolean;
}

/**
 * A deliberately simple relay over the simulation's ports, used only to test the harness
 * itself: one event at a time, lease + fencing, stream with checkpoints, drain on a lost
 * position, sweep. Not the relay under test (that is lib/relay's `RelayNode`).
 */
export class ToyRelay implements RelayUnderTest {
  private running = false;
  private fencing: number | undefined;
  private leaseDeadline = 0;
  private stream: StreamStateName = 'stopped';
  private cursor?: ChangeCursor;
  private term = 0;
  private readonly partitions = new Map<string, number>();

  constructor(
    private readonly ports: SimRelayPorts,
    private readonly bugs: ToyBugs = {},
  ) {}

  async start(): Promise<void> {
    this.running = true;
    this.tick();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stream = 'stopped';
    await this.cursor?.close();
    if (this.fencing !== undefined) {
      await this.ports.state.releaseLease(this.ports.owner, this.fencing).catch(() => undefined);
    }
    this.fencing = undefined;
  }

  status(): RelayStatus {
    const leader = this.isLeader();
    return {
      running: this.running,
      role: !this.running ? 'stopped' : leader ? 'leader' : 'standby',
      fencing: leader ? this.fencing : undefined,
      stream: leader ? this.stream : 'stopped',
      heldDestinations: [],
      inFlight: { events: 0, bytes: 0 },
      trackedAggregates: 0,
    };
  }

  private isLeader(): boolean {
    return this.fencing !== undefined && this.ports.clock.monotonic() < this.leaseDeadline;
  }

  private tick(): void {
    if (!this.running) return;
    void this.leaseStep()
      .catch(() => undefined)
      .finally(() =>
        this.ports.clock.setTimeout(() => this.tick(), this.ports.options.lease.renewMs),
      );
  }

  private async leaseStep(): Promise<void> {
    const { state, owner, clock, options } = this.ports;
    const startedAt = clock.monotonic();
    const serverNow = await state.serverTime();
    const expiresAt = new Date(serverNow.getTime() + options.lease.durationMs);
    if (this.fencing !== undefined) {
      if (!this.isLeader() || !(await state.renewLease(owner, this.fencing, expiresAt))) {
        if (this.bugs.noLeaseCheck) return;
        this.endTerm();
        return;
      }
      this.leaseDeadline = startedAt + options.lease.durationMs - options.lease.renewMs / 3;
      return;
    }
    const grant = await state.acquireLease(owner, serverNow, expiresAt);
    if (!grant || !this.running) return;
    this.fencing = grant.fencing;
    this.leaseDeadline = startedAt + options.lease.durationMs - options.lease.renewMs / 3;
    const term = ++this.term;
    const stored = await state.claimCheckpoint(grant.fencing);
    if (!stored) {
      this.endTerm();
      return;
    }
    void this.follow(term, stored.token);
    if (!this.bugs.noSweep) this.sweepLater(term);
  }

  private endTerm(): void {
    this.fencing = undefined;
    this.term++;
    this.stream = 'stopped';
    void this.cursor?.close();
  }

  private active(term: number): boolean {
    return this.running && term === this.term && (this.bugs.noLeaseCheck || this.isLeader());
  }

  private fence(): number | null {
    return this.bugs.unfenced ? null : (this.fencing ?? null);
  }

  private async follow(term: number, from: ResumeToken | undefined): Promise<void> {
    const { changes, state, clock, options } = this.ports;
    let position = from;
    while (this.active(term)) {
      try {
        if (position === undefined) {
          this.stream = 'draining';
          const cursor = await changes.open(undefined);
          this.cursor = cursor;
          if (!this.bugs.noDrain) await this.drain(term);
          await this.read(term, cursor, (token) => (position = token));
        } else {
          const cursor = await changes.open(position);
          this.cursor = cursor;
          await this.read(term, cursor, (token) => (position = token));
        }
      } catch (error) {
        await this.cursor?.close();
        if (this.bugs.streamGivesUp) {
          this.stream = 'stopped';
          return;
        }
        if (error instanceof ChangeSourceError && error.kind === 'position-lost') {
          position = undefined;
          if (this.active(term))
            await state
              .clearCheckpoint(this.fencing as number, new Date(clock.now()))
              .catch(() => false);
          continue;
        }
        this.stream = 'retrying';
        await clock.sleep(options.backoff.initialMs);
      }
    }
  }

  private async read(
    term: number,
    cursor: ChangeCursor,
    moved: (token: ResumeToken) => void,
  ): Promise<void> {
    const { outbox, state, clock } = this.ports;
    this.stream = 'following';
    while (this.active(term)) {
      const batch = await cursor.next(
        this.bugs.readsPastBound
          ? 2 * this.ports.options.maxInFlight
          : this.ports.options.batchSize,
      );
      for (const change of batch.changes) {
        if (!this.active(term)) return;
        if (this.bugs.checkpointBeforeAck) {
          await state.saveCheckpoint(change.token, this.fencing as number, new Date(clock.now()));
        }
        const [pending] = await outbox.findPendingState([change.event._id]);
        if (pending) await this.publish(term, { ...change.event, ...pending });
        moved(change.token);
        await state.saveCheckpoint(change.token, this.fencing as number, new Date(clock.now()));
      }
      if (batch.changes.length === 0 && batch.position !== undefined) {
        if (!this.active(term)) return;
        moved(batch.position);
        await state.saveCheckpoint(batch.position, this.fencing as number, new Date(clock.now()));
      }
    }
  }

  private async drain(term: number): Promise<void> {
    let after: OutboxEventRecord | undefined;
    while (this.active(term)) {
      const page = await this.ports.outbox.findPendingPage(after, this.ports.options.batchSize);
      if (page.length === 0) return;
      const ordered = this.bugs.drainNewestFirst ? [...page].reverse() : page;
      for (const event of ordered) await this.publish(term, event);
      after = page[page.length - 1];
    }
  }

  private sweepLater(term: number): void {
    this.ports.clock.setTimeout(() => {
      if (!this.active(term)) return;
      void this.sweep(term)
        .catch(() => undefined)
        .finally(() => this.sweepLater(term));
    }, this.ports.options.sweepIntervalMs);
  }

  private async sweep(term: number): Promise<void> {
    const { outbox, clock, options } = this.ports;
    await outbox.pendingStats();
    const now = clock.now();
    const stale = await outbox.findStaleEvents(
      undefined,
      new Date(now - options.sweepGraceMs),
      new Date(now),
      options.batchSize,
    );
    for (const ref of stale) {
      for (const event of await outbox.findPendingOfAggregates([ref], options.batchSize)) {
        if (!this.active(term)) return;
        await this.publish(term, event);
      }
    }
  }

  /** Sends one event; marks it published, or dead when the broker refuses it for good. */
  private async publish(term: number, event: OutboxEventRecord): Promise<void> {
    const { sender, outbox, clock, topicPrefix } = this.ports;
    const topic = `${topicPrefix}${event.aggregateType}`;
    let partitions = this.partitions.get(topic);
    if (partitions === undefined) {
      partitions = await sender.partitionCount(topic);
      this.partitions.set(topic, partitions);
    }
    const message = { ...toKafkaMessage(event), partition: hash(event.aggregateId) % partitions };
    for (let attempt = 1; this.active(term); attempt++) {
      try {
        await sender.send([{ topic, messages: [message] }]);
        if (this.bugs.publishTwice) await sender.send([{ topic, messages: [message] }]);
        await outbox.markPublished([event._id], new Date(clock.now()), this.fence());
        return;
      } catch (error) {
        const type =
          (error as { type?: string; cause?: { type?: string } }).type ??
          (error as { cause?: { type?: string } }).cause?.type;
        if (type === 'MESSAGE_TOO_LARGE' || type === 'RECORD_LIST_TOO_LARGE') {
          const record = {
            reason: 'rejected' as const,
            error: String(type),
            attempts: attempt,
            at: new Date(clock.now()),
          };
          await outbox.markDead(event, record, this.fence());
          await outbox.copyToDeadLetters({ ...event, deadLetter: record });
          await outbox.removeDead(event._id, this.fence());
          return;
        }
        await clock.sleep(this.ports.options.backoff.initialMs);
      }
    }
  }
}

type StreamStateName = RelayStatus['stream'];

function hash(text: string): number {
  let value = 0;
  for (let index = 0; index < text.length; index++)
    value = (value * 31 + text.charCodeAt(index)) >>> 0;
  return value;
}
