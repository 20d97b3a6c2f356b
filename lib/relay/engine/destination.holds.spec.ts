import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { OUTBOX_CHANNELS } from '../../diagnostics/diagnostic-channels';
import type { RelayLogger } from '../ports/relay-logger';
import { DestinationHolds } from './destination.holds';

const quiet: RelayLogger = { log: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
const backoff = { initialMs: 100, maxMs: 1000, jitter: 0 };

describe('DestinationHolds', () => {
  it('a probe that waits for another held destination frees its hold for a new probe', () => {
    // One publish: A's event times out on the partition, B's is refused by the topic.
    const holds = new DestinationHolds(backoff, () => 0.5, quiet);
    holds.fail('t#0', 'A', 'timeout', 0);
    holds.fail('t', 'B', 'not authorized', 0);
    holds.wait('t', 'C');

    // The partition's probe A is found bound for the held topic (its partition not known yet).
    expect(holds.dueProbes(1_000)).toEqual([
      { destination: 't#0', lane: 'A' },
      { destination: 't', lane: 'B' },
    ]);
    expect(holds.blocking(['t'], 'A')).toBe('t');
    holds.wait('t', 'A');
    // The topic's probe B then times out on the partition.
    holds.fail('t#0', 'B', 'timeout', 1_000);

    // Both holds retry again (neither keeps a probe that waits for the other).
    const next = holds.nextRetryAt();
    expect(next).toBeDefined();
    const probes = holds.dueProbes(10_000);
    expect(probes.map((probe) => probe.destination).sort()).toEqual(['t', 't#0']);
    expect(holds.nextRetryAt()).toBeUndefined();
  });

  it('names the lane that has waited longest (not a probe), for it to give its place up, and counts the waiting lanes', () => {
    const holds = new DestinationHolds(backoff, () => 0.5, quiet);
    expect(holds.longestWaiting()).toBeUndefined();
    holds.fail('t', 'A', 'not authorized', 0);
    holds.wait('t', 'B');
    expect(holds.waitingLanes).toBe(2);
    expect(holds.longestWaiting()).toBe('A');
    expect(holds.dueProbes(1_000)).toEqual([{ destination: 't', lane: 'A' }]);
    expect(holds.longestWaiting()).toBe('B');
    expect(holds.park('B')).toBe(false);
    expect(holds.waitingLanes).toBe(0);
    expect(holds.longestWaiting()).toBeUndefined();
  });

  it('a hold that ends because no lane waits for it any more ends with destination-released, and says so', () => {
    // Defect: the hold was dropped silently, leaving a destination-held without its release.
    const released: unknown[] = [];
    const listener = (message: unknown) => released.push(message);
    const logger = { ...quiet, log: jest.fn() };
    subscribe(OUTBOX_CHANNELS.relayDestinationReleased, listener);
    try {
      const holds = new DestinationHolds(backoff, () => 0.5, logger);
      holds.fail('t#1', 'A', 'not enough replicas', 1_000);
      holds.fail('t#1', 'A', 'not enough replicas', 1_200);
      // A's events were dead-lettered (or left memory): nothing waits for t#1 any more.
      holds.probeEnded('A');
      expect(holds.dueProbes(5_000)).toEqual([]);
      expect(holds.size).toBe(0);
    } finally {
      unsubscribe(OUTBOX_CHANNELS.relayDestinationReleased, listener);
    }
    expect(released).toEqual([
      { destination: 't#1', failures: 2, heldMs: 4_000, reason: 'nothing-waits' },
    ]);
    expect(logger.log).toHaveBeenCalledWith(expect.stringMatching(/^"t#1" is no longer held/));
  });
});
