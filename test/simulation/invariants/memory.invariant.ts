import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (d) Memory: after every step, each live relay holds at most `maxInFlight` events, at most
 * `maxInFlightBytes` plus one read's worth (`batchSize` of the largest event) in bytes, and
 * tracks at most 2 x `maxInFlight` aggregates (lanes): those holding events are bounded by the
 * events, and those holding none (waiting for a retry, a held destination or a read) by
 * `maxInFlight`; beyond, an aggregate waits in the collection, not in memory (issue 18, defect
 * 9). Each new high of lanes above the bound is a violation.
 */
export class MemoryInvariant implements InvariantChecker {
  readonly id = 'd';
  readonly name = 'bounded memory';
  private samples = 0;
  private maxEvents = 0;
  private maxBytes = 0;
  private maxLanes = 0;
  private lanesOverBound = 0;
  /** The most aggregates tracked above the bound so far (each new high is a violation). */
  private worstLanes = 0;
  private readonly violations: string[] = [];

  afterStep(world: SimWorld): void {
    const options = world.schedule.options;
    for (const { node, status } of world.statuses()) {
      this.samples++;
      const { events, bytes } = status.inFlight;
      this.maxLanes = Math.max(this.maxLanes, status.trackedAggregates);
      if (status.trackedAggregates > options.maxInFlight) this.lanesOverBound++;
      const laneBound = 2 * options.maxInFlight;
      if (status.trackedAggregates > Math.max(laneBound, this.worstLanes)) {
        this.worstLanes = status.trackedAggregates;
        this.violations.push(
          `${world.now}: ${node.process.name} tracks ${status.trackedAggregates} aggregates (bound ${laneBound} = 2 x maxInFlight)`,
        );
      }
      this.maxEvents = Math.max(this.maxEvents, events);
      this.maxBytes = Math.max(this.maxBytes, bytes);
      const byteBound = options.maxInFlightBytes + options.batchSize * this.largestEvent(world);
      if (events > options.maxInFlight && this.violations.length < 20) {
        this.violations.push(
          `${world.now}: ${node.process.name} holds ${events} events (maxInFlight ${options.maxInFlight})`,
        );
      }
      if (bytes > byteBound && this.violations.length < 20) {
        this.violations.push(
          `${world.now}: ${node.process.name} holds ${bytes} bytes (bound ${byteBound} = maxInFlightBytes ` +
            `${options.maxInFlightBytes} + batchSize x largest event)`,
        );
      }
    }
  }

  private largest = { commits: 0, bytes: 0 };

  private largestEvent(world: SimWorld): number {
    const commits = world.history.commits;
    if (this.largest.commits !== commits.size) {
      let bytes = 0;
      for (const commit of commits.values()) bytes = Math.max(bytes, commit.bytes);
      this.largest = { commits: commits.size, bytes };
    }
    return this.largest.bytes;
  }

  finish(): InvariantResult {
    return {
      id: this.id,
      name: this.name,
      checked: this.samples,
      violations: capped(this.violations),
      counts: {
        'max events held': this.maxEvents,
        'max bytes held': this.maxBytes,
        'max aggregates tracked': this.maxLanes,
        'samples tracking more aggregates than maxInFlight': this.lanesOverBound,
      },
    };
  }
}
