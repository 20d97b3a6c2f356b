import { describeError } from '../../common/errors/describe-error';
import { outboxDiagnostics } from '../../diagnostics/outbox.diagnostics';
import type { PublishOutcome } from '../../publisher/outbox-publisher.interface';
import type { DeadLetterRecord } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { RelayWrites } from '../term/fenced.writes';
import type { AckedEvents } from './acked-events';
import type { AggregateLane, LaneItem } from './aggregate.lane';
import type { BatchEntry } from './batch.queue';
import type { BrokerPause } from './broker.pause';
import type { DestinationHolds } from './destination.holds';
import type { DurableWrites } from './durable.writes';
import type { LaneSteps } from './lane.steps';
import type { LaneTable } from './lane.table';
import type { MarksRescan } from './marks.rescan';
import { judgeLane } from './outcome.judge';
import type { JudgeContext, LaneJudgement } from './outcome.judge';

export interface OutcomeApplierDeps extends Omit<JudgeContext, 'now'> {
  /** Server-time estimate, ms. */
  now: () => number;
  destinationsOf?: (event: LaneItem['event']) => readonly string[];
  writes: RelayWrites;
  lanes: LaneTable;
  steps: LaneSteps;
  holds: DestinationHolds;
  pause: BrokerPause;
  acked: AckedEvents;
  durable: DurableWrites;
  rescans: MarksRescan;
  closed: () => boolean;
  track: (task: Promise<void>) => void;
  pump: () => void;
  metrics: OutboxRelayMetrics;
  logger: RelayLogger;
}

/**
 * What the broker answered, applied lane by lane (see `judgeLane`): acknowledged events are
 * settled and marked published, a broker outage pauses everything, a refusing destination holds
 * its lanes, a failed event records its attempt and blocks its aggregate until its retry, and an
 * event out of attempts is moved to the dead letters before its aggregate goes on.
 */
export class OutcomeApplier {
  constructor(private readonly deps: OutcomeApplierDeps) {}

  /** Applies the outcomes of one publish call (also after `close`: what the broker acknowledged is settled and marked). */
  apply(entries: readonly BatchEntry[], outcomes: readonly PublishOutcome[]): void {
    const now = this.deps.now();
    const context = { ...this.deps, now };
    let offset = 0;
    const accepted: LaneItem[] = [];
    const judged = entries.map((entry) => {
      const judgement = judgeLane(entry.items, outcomes, context, offset);
      offset += entry.items.length;
      for (const item of judgement.accepted) accepted.push(item);
      return judgement;
    });
    if (accepted.length > 0) this.accepted(accepted, now);
    entries.forEach((entry, i) => this.applyLane(entry.lane, entry.items, judged[i], now));
  }

  private accepted(items: readonly LaneItem[], now: number): void {
    this.deps.metrics.published += items.length;
    outboxDiagnostics.relayPublished(items);
    this.deps.pause.accepted();
    const destinationsOf = this.deps.destinationsOf;
    if (destinationsOf && this.deps.holds.size > 0) {
      const held = this.deps.holds.size;
      for (const item of items) {
        for (const key of this.deps.holds.succeeded(destinationsOf(item.event), now)) {
          const lane = this.deps.lanes.get(key);
          if (lane?.waitsForDestination) this.deps.steps.startCatchUp(lane);
        }
      }
      if (this.deps.holds.size < held) this.deps.rescans.start();
    }
    const ids = items.map((item) => item.event._id);
    const keys = items.map((item) => item.id);
    // Acknowledged, so safe to settle now; if the mark does not land the event stays pending
    // and is published again later (a duplicate, never a loss). Until it lands, a catch-up page
    // that still finds the event pending skips it.
    const mark = this.deps.writes.markPublished(ids, new Date(now)).catch((error: unknown) => {
      this.deps.logger.warn(
        `Could not mark ${ids.length} acknowledged events published (they will be sent again): ${describeError(error)}`,
      );
    });
    this.deps.acked.marked(keys, mark);
    this.deps.track(mark);
  }

  private applyLane(
    lane: AggregateLane,
    items: readonly LaneItem[],
    { accepted, verdict }: LaneJudgement,
    now: number,
  ): void {
    lane.busy = false;
    for (const item of accepted) {
      this.deps.steps.finish(lane, item);
      for (const settle of item.settles) settle();
    }
    if (verdict.kind === 'accepted') return this.deps.steps.continueLane(lane);
    const acceptedSet = new Set(accepted);
    const after = (from: number): LaneItem[] =>
      items.slice(from).filter((item) => !acceptedSet.has(item));
    switch (verdict.kind) {
      case 'broker':
        lane.requeue(after(verdict.from));
        if (!this.deps.closed()) {
          this.deps.pause.failed(verdict.error);
          this.deps.steps.armTimer();
        }
        break;
      case 'destination':
        this.deps.holds.fail(verdict.destination, lane.key, describeError(verdict.error), now);
        this.deps.steps.holdOn(lane, verdict.destination, after(verdict.from));
        break;
      case 'failure': {
        const failed = items[verdict.at];
        const { record } = verdict;
        this.deps.metrics.retried++;
        outboxDiagnostics.relayRetryScheduled(failed.event, record, this.deps.maxAttempts);
        this.deps.logger.warn(
          `Event ${failed.event.eventId} (aggregate ${lane.ref.aggregateType}/${lane.ref.aggregateId}) failed attempt ` +
            `${record.attempts}/${this.deps.maxAttempts}, retry at ${record.nextAttemptAt.toISOString()}: ${record.error}`,
        );
        this.deps.steps.finish(lane, failed);
        this.deps.steps.blockUntil(lane, record.nextAttemptAt.getTime());
        this.deps.steps.dropQueue(lane, after(verdict.at + 1));
        // The aggregate is not read again until the record is durable: a read before it lands
        // finds the event pending without it, and publishes it again as the same attempt.
        lane.busy = true;
        const write = this.deps.durable.run('a failure record', () =>
          this.deps.writes.recordFailure(failed.event, record),
        );
        this.deps.rescans.markerWrite(write);
        this.deps.track(
          write.then((landed) => {
            lane.busy = false;
            if (!landed) return;
            failed.settles.forEach((settle) => settle());
            if (lane.waitsForRetry) this.deps.steps.parkIfOver(lane);
            else {
              // Its retry came while the record was on its way: read it now.
              this.deps.steps.continueLane(lane);
              this.deps.pump();
            }
          }),
        );
        return;
      }
      case 'dead': {
        const dead = items[verdict.at];
        lane.requeue(after(verdict.at + 1));
        this.deps.steps.finish(lane, dead);
        lane.busy = true; // later events of the aggregate wait until the dead mark is durable
        this.deps.track(this.deadLetter(lane, dead, verdict.record));
        return;
      }
    }
    this.deps.steps.continueLane(lane);
  }

  private async deadLetter(
    lane: AggregateLane,
    item: LaneItem,
    record: DeadLetterRecord,
  ): Promise<void> {
    const landed = await this.deps.durable.run('a dead-letter mark', () =>
      this.deps.writes.markDead(item.event, record),
    );
    lane.busy = false;
    if (!landed) return;
    this.deps.metrics.deadLettered++;
    outboxDiagnostics.relayDeadLettered(item.event, record);
    this.deps.logger.error(
      `Event ${item.event.eventId} (${item.event.eventType}, aggregate ${lane.ref.aggregateType}/${lane.ref.aggregateId}) ` +
        `moved to the dead-letter collection after ${record.attempts} attempt(s) (${record.reason}): ${record.error}`,
    );
    item.settles.forEach((settle) => settle());
    this.deps.steps.continueLane(lane);
    this.deps.pump();
    const marked = { ...item.event, status: 'dead', deadLetter: record } as const;
    try {
      await this.deps.writes.copyToDeadLetters(marked as never);
      await this.deps.writes.removeDead(item.event._id);
    } catch (error) {
      this.deps.logger.warn(
        `Dead-lettered event ${item.event.eventId} is marked dead; moving it to the dead-letter collection failed ` +
          `(the sweep finishes it): ${describeError(error)}`,
      );
    }
  }
}
