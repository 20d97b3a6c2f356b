import { outboxDiagnostics } from '../../diagnostics/outbox.diagnostics';
import { backoffDelay } from '../../common/backoff';
import type { RelayLogger } from '../ports/relay-logger';
import type { ResolvedRelayOptions } from '../relay.options';
import type { HeldDestination } from '../relay.status';

interface Hold {
  destination: string;
  since: number;
  retryAt: number;
  failures: number;
  lastError: string;
  /** Aggregates (lane keys) waiting for this destination, in the order they were held. */
  waiting: Set<string>;
  /** The one aggregate allowed through to find out whether the destination accepts again. */
  probe?: string;
  /**
   * Aggregates that waited here and left memory (the engine's lane bound): their events are
   * pending in the collection, marked, and are read again from there (sweep, rescan of marks).
   */
  parked: number;
}

/**
 * Destinations (a Kafka topic, or one partition of it) that refuse events for now. While one is
 * held, nothing is sent there: the aggregates bound there wait (their events stay pending in the
 * collection, with a durable marker), everything else flows. When the hold's backoff runs out,
 * one waiting aggregate probes; its success releases the others, its failure extends the hold.
 * No attempt is counted against the events and nothing is dead-lettered: the relay says so once
 * (an error log, the `heldDestinations` gauge, the status) and keeps retrying.
 */
export class DestinationHolds {
  private readonly holds = new Map<string, Hold>();

  constructor(
    private readonly backoff: ResolvedRelayOptions['backoff'],
    private readonly random: () => number,
    private readonly logger: RelayLogger,
  ) {}

  get size(): number {
    return this.holds.size;
  }

  /** Lanes waiting for a held destination (not probing it): they hold no event. */
  get waitingLanes(): number {
    let count = 0;
    for (const hold of this.holds.values()) count += hold.waiting.size;
    return count;
  }

  /** The lane that has waited longest for a held destination (not a probe); none: undefined. */
  longestWaiting(): string | undefined {
    for (const hold of this.holds.values()) {
      const first = hold.waiting.values().next();
      if (!first.done) return first.value;
    }
    return undefined;
  }

  /**
   * The hold that keeps `lane` from sending to one of `destinations`, if any. A lane probing one
   * of them passes all of them (a topic and one of its partitions may both be held: each probe
   * must be able to reach the broker, or neither hold ever ends).
   */
  blocking(destinations: readonly string[], lane: string): string | undefined {
    let blocked: string | undefined;
    for (const destination of destinations) {
      const hold = this.holds.get(destination);
      if (!hold) continue;
      if (hold.probe === lane) return undefined;
      blocked ??= destination;
    }
    return blocked;
  }

  /** A send to `destination` failed: hold it (or extend the hold), with `lane` waiting on it. */
  fail(destination: string, lane: string, error: string, now: number): number {
    let hold = this.holds.get(destination);
    if (!hold) {
      hold = {
        destination,
        since: now,
        retryAt: 0,
        failures: 0,
        lastError: error,
        waiting: new Set(),
        parked: 0,
      };
      this.holds.set(destination, hold);
      outboxDiagnostics.relayDestinationHeld(destination, error, now);
      this.logger.error(
        `"${destination}" refuses events (${error}). Only events bound there are held back (they stay pending, ` +
          'no attempt is counted); the relay retries with backoff until it accepts them again.',
      );
    }
    hold.failures++;
    hold.lastError = error;
    hold.retryAt = now + backoffDelay(hold.failures, this.backoff, this.random);
    return this.join(hold, lane);
  }

  /** `lane` waits for `destination` (its events were found bound there while it is held). */
  wait(destination: string, lane: string): number | undefined {
    const hold = this.holds.get(destination);
    return hold ? this.join(hold, lane) : undefined;
  }

  /**
   * `lane` waits for `hold`, and probes no hold: a probe that waits never answers, and a hold
   * with a probe never retries (a topic and its partition, each probed by a lane waiting for the
   * other, would wait for each other forever). Each freed hold retries with its next lane.
   */
  private join(hold: Hold, lane: string): number {
    for (const other of this.holds.values()) {
      if (other.probe === lane) other.probe = undefined;
    }
    hold.waiting.add(lane);
    return hold.retryAt;
  }

  /** Something was accepted by these destinations: release their holds; returns the lanes to resume. */
  succeeded(destinations: readonly string[], now: number): string[] {
    const resumed: string[] = [];
    for (const destination of destinations) {
      const hold = this.holds.get(destination);
      if (!hold) continue;
      this.holds.delete(destination);
      resumed.push(...hold.waiting);
      outboxDiagnostics.relayDestinationReleased(
        destination,
        hold.failures,
        now - hold.since,
        'accepted',
      );
      this.logger.log(
        `"${destination}" accepts events again after ${hold.failures} failed attempt(s) over ` +
          `${Math.max(0, Math.round((now - hold.since) / 1000))} s; resuming ${hold.waiting.size} aggregate(s)` +
          (hold.parked > 0 ? ` (and ${hold.parked} more read again from the collection).` : '.'),
      );
    }
    return resumed;
  }

  /**
   * The probe of `lane` ended without an answer from the destination (nothing pending there any
   * more, or its event was dead-lettered; with `parked`, see `park`). Returns whether a hold needs
   * a new probe.
   */
  probeEnded(lane: string, parked = false): boolean {
    let freed = false;
    for (const hold of this.holds.values()) {
      const probing = hold.probe === lane;
      if (probing) {
        hold.probe = undefined;
        freed = true;
      }
      const waited = hold.waiting.delete(lane);
      if (parked && (waited || probing)) hold.parked++;
    }
    return freed;
  }

  /**
   * `lane` leaves memory (see `LaneTable`): a hold it waited for counts it as parked. Returns
   * whether it was a probe (a hold then needs a new one).
   */
  park(lane: string): boolean {
    return this.probeEnded(lane, true);
  }

  /** Holds whose backoff ran out and that have no probe yet: one waiting lane each, now the probe. */
  dueProbes(now: number): Array<{ destination: string; lane: string }> {
    const out: Array<{ destination: string; lane: string }> = [];
    for (const hold of [...this.holds.values()]) {
      if (hold.probe !== undefined || hold.retryAt > now) continue;
      const first = hold.waiting.values().next();
      if (first.done) {
        this.endUnused(hold, now);
        continue;
      }
      hold.probe = first.value;
      hold.waiting.delete(first.value);
      out.push({ destination: hold.destination, lane: first.value });
    }
    return out;
  }

  /**
   * `hold`'s backoff ran out and no lane waits for it any more (their events were dead-lettered,
   * or published through another relay): it ends unprobed, released as such.
   */
  private endUnused(hold: Hold, now: number): void {
    this.holds.delete(hold.destination);
    outboxDiagnostics.relayDestinationReleased(
      hold.destination,
      hold.failures,
      now - hold.since,
      'nothing-waits',
    );
    this.logger.log(
      `"${hold.destination}" is no longer held: no event waits for it any more (after ${hold.failures} ` +
        `failed attempt(s) over ${Math.max(0, Math.round((now - hold.since) / 1000))} s).`,
    );
  }

  /** When the next hold's backoff runs out. */
  nextRetryAt(): number | undefined {
    let next: number | undefined;
    for (const hold of this.holds.values()) {
      if (hold.probe === undefined && (next === undefined || hold.retryAt < next))
        next = hold.retryAt;
    }
    return next;
  }

  snapshot(): HeldDestination[] {
    return [...this.holds.values()].map((hold) => ({
      destination: hold.destination,
      since: hold.since,
      retryAt: hold.retryAt,
      failures: hold.failures,
      lastError: hold.lastError,
    }));
  }
}
