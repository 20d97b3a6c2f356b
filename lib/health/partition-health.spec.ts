import type { PartitionStatus } from '../relay/relay.status';
import type { OplogWindow } from './oplog-window.probe';
import { checkpointReport, judgePartitions } from './partition-health';
import type { PartitionsInput } from './partition-health';
import type { StoredPartition } from '../relay/ports/relay-state.reader';

const now = new Date('2026-12-01T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const later = (ms: number) => new Date(now.getTime() + ms);
/** A KeyString resume token (MongoDB 4.2+) pointing at `at`. */
const tokenAt = (at: Date) => ({
  _data: `82${Math.floor(at.getTime() / 1000)
    .toString(16)
    .padStart(8, '0')}000000012B0229296E5A1004`,
});
const window: OplogWindow = {
  available: true,
  firstEntryAt: ago(3_600_000),
  windowMs: 3_600_000,
  source: 'local.oplog.rs',
};

const ME = 'host-a:1:aaaa';
const OTHER = 'host-b:2:bbbb';

/** A partition's documents: held by `owner` (live lease), a position `ageMs` old. */
function stored(
  partition: number,
  opts: {
    owner?: string;
    leaseExpiresAt?: Date;
    positionAgeMs?: number;
    oldestPendingAgeMs?: number;
  } = {},
): StoredPartition {
  return {
    partition,
    ...(opts.owner
      ? {
          lease: {
            owner: opts.owner,
            fencing: 10 + partition,
            expiresAt: opts.leaseExpiresAt ?? later(3000),
          },
        }
      : {}),
    ...(opts.positionAgeMs !== undefined
      ? {
          checkpoint: {
            token: tokenAt(ago(opts.positionAgeMs)),
            savedAt: ago(opts.positionAgeMs),
          },
        }
      : {}),
    ...(opts.oldestPendingAgeMs !== undefined
      ? { oldestPendingAt: ago(opts.oldestPendingAgeMs) }
      : {}),
  };
}

/** This instance's status of a partition it holds. */
const mine = (partition: number, extra: Partial<PartitionStatus> = {}): PartitionStatus => ({
  partition,
  owner: ME,
  owned: true,
  fencing: 10 + partition,
  stream: 'following',
  inFlight: { events: 0, bytes: 0 },
  pendingCount: 0,
  ...extra,
});
const notMine = (partition: number, owner?: string): PartitionStatus => ({
  partition,
  owner,
  owned: false,
  stream: 'stopped',
});

function input(
  each: StoredPartition[],
  partitions: PartitionStatus[] | undefined,
  extra: Partial<PartitionsInput> = {},
): PartitionsInput {
  return {
    stored: { partitions: each.length, generation: 2, each },
    serverNow: now,
    relay: { configured: each.length, partitions },
    maxLagMs: 60_000,
    window,
    maxUse: 0.5,
    ...extra,
  };
}

describe('the health of a partitioned relay, as one instance judges it', () => {
  it('is healthy holding every partition, each following, and reports each', () => {
    const verdict = judgePartitions(
      input(
        [0, 1, 2].map((p) => stored(p, { owner: ME, positionAgeMs: 1000 + p * 1000 })),
        [0, 1, 2].map((p) => mine(p, { pendingCount: p })),
      ),
    );
    expect(verdict.problems).toEqual([]);
    expect(verdict.degraded).toEqual([]);
    expect(verdict.partitions).toMatchObject({
      count: 3,
      generation: 2,
      configured: 3,
      owned: [0, 1, 2],
      unheld: [],
    });
    expect(verdict.partitions.each[1]).toEqual({
      partition: 1,
      owner: ME,
      owned: true,
      fencing: 11,
      stream: 'following',
      inFlightEvents: 0,
      pendingCount: 1,
      checkpoint: {
        saved: true,
        savedAt: ago(2000),
        positionAt: ago(2000),
        positionTimeFrom: 'resume-token',
        ageMs: 2000,
      },
    });
    // The oldest position of the partitions held decides.
    expect(verdict.checkpoint).toMatchObject({ partition: 2, ageMs: 3000 });
    expect(verdict.used).toBeCloseTo(3000 / 3_600_000);
  });

  it('is down when a partition it holds lags, naming the partition', () => {
    const verdict = judgePartitions(
      input(
        [stored(0, { owner: ME, oldestPendingAgeMs: 95_000 }), stored(1, { owner: ME })],
        [mine(0), mine(1)],
      ),
    );
    expect(verdict.problems).toEqual([
      'Partition 0 (held by this instance): the oldest pending event is 95 s old (limit 60 s).',
    ]);
    expect(verdict.partitions.each[0].oldestPendingAgeMs).toBe(95_000);
  });

  it('reports partitions nobody holds, and lag in partitions of others, as degraded, not down', () => {
    const verdict = judgePartitions(
      input(
        [
          stored(0, { owner: ME, positionAgeMs: 1000 }),
          stored(1, { owner: OTHER, oldestPendingAgeMs: 70_000 }),
          // A crashed holder: its lease expired on the server's clock.
          stored(2, { owner: OTHER, leaseExpiresAt: ago(1), oldestPendingAgeMs: 80_000 }),
          // A graceful stop released it (expiry set to the epoch).
          stored(3, { owner: OTHER, leaseExpiresAt: new Date(0) }),
        ],
        [mine(0), notMine(1, OTHER), notMine(2, OTHER), notMine(3, OTHER)],
        { oldestPendingAgeMs: 80_000 },
      ),
    );
    expect(verdict.problems).toEqual([]);
    expect(verdict.partitions.owned).toEqual([0]);
    expect(verdict.partitions.unheld).toEqual([2, 3]);
    expect(verdict.partitions.each.map((p) => p.owner)).toEqual([ME, OTHER, undefined, undefined]);
    expect(verdict.degraded).toEqual([
      'No relay holds partitions 2, 3 of 4 (no live lease): their events wait until a live relay takes them (at its next membership tick).',
      `Partition 1 (held by ${OTHER}): the oldest pending event is 70 s old (limit 60 s).`,
      'Partition 2 (held by nobody): the oldest pending event is 80 s old (limit 60 s).',
    ]);
  });

  it("judges only the oldest position of the partitions it holds against the oplog window; others' are degraded", () => {
    const verdict = judgePartitions(
      input(
        [
          stored(0, { owner: ME, positionAgeMs: 10_000 }),
          stored(1, { owner: ME, positionAgeMs: 2_000_000 }),
          stored(2, { positionAgeMs: 3_000_000 }),
        ],
        [mine(0), mine(1), notMine(2)],
      ),
    );
    expect(verdict.checkpoint).toMatchObject({ partition: 1, ageMs: 2_000_000 });
    expect(verdict.used).toBeCloseTo(2_000_000 / 3_600_000);
    expect(verdict.problems).toEqual([
      expect.stringMatching(
        /^The saved stream position of partition 1 is 2000 s old, 56% of the oplog window \(3600 s; limit 50%\)/,
      ),
    ]);
    expect(verdict.degraded).toEqual([
      expect.stringMatching(/^No relay holds partition 2 of 3/),
      expect.stringMatching(
        /^The saved stream position of partition 2 \(held by nobody\) is 3000 s old, 83% of the oplog window/,
      ),
    ]);
  });

  it('is healthy holding no partition (more instances than partitions), with nothing to judge', () => {
    const verdict = judgePartitions(
      input(
        [stored(0, { owner: OTHER, positionAgeMs: 1000 }), stored(1, { owner: OTHER })],
        [notMine(0, OTHER), notMine(1, OTHER)],
      ),
    );
    expect(verdict.problems).toEqual([]);
    expect(verdict.degraded).toEqual([]);
    expect(verdict.checkpoint).toEqual({ saved: false });
    expect(verdict.used).toBeUndefined();
  });

  it('says when this instance is configured with another partition count than the stored layout', () => {
    const verdict = judgePartitions({
      ...input([stored(0, { owner: OTHER }), stored(1, { owner: OTHER })], undefined),
      relay: { configured: 1, partitions: undefined },
    });
    expect(verdict.problems).toEqual([]);
    expect(verdict.partitions.configured).toBe(1);
    expect(verdict.degraded).toEqual([
      'This instance is configured with relay.partitions 1, the stored layout has 2 (generation 2): it relays nothing of that layout and switches once no lease of it is valid.',
    ]);
  });

  it('reports a lagging event written without a slot as degraded', () => {
    const verdict = judgePartitions(
      input(
        [stored(0, { owner: ME, oldestPendingAgeMs: 1000 }), stored(1, { owner: ME })],
        [mine(0), mine(1)],
        { oldestPendingAgeMs: 120_000 },
      ),
    );
    expect(verdict.problems).toEqual([]);
    expect(verdict.degraded).toEqual([
      'The oldest pending event (120 s old, limit 60 s) has no slot yet (written by a version before slots): the relay holding partition 0 stamps it.',
    ]);
  });

  it('in an app without a relay, judges the outbox as a whole: the global lag, the oldest position of all', () => {
    const verdict = judgePartitions({
      ...input(
        [
          stored(0, { owner: OTHER, positionAgeMs: 1000 }),
          stored(1, { positionAgeMs: 2_500_000, oldestPendingAgeMs: 90_000 }),
        ],
        undefined,
      ),
      relay: undefined,
      oldestPendingAgeMs: 90_000,
    });
    expect(verdict.partitions.configured).toBeUndefined();
    expect(verdict.partitions.owned).toEqual([]);
    expect(verdict.partitions.unheld).toEqual([1]);
    expect(verdict.checkpoint).toMatchObject({ partition: 1, ageMs: 2_500_000 });
    expect(verdict.problems).toEqual([
      'The oldest pending event is 90 s old (limit 60 s).',
      expect.stringMatching(/^The saved stream position of partition 1 is 2500 s old/),
    ]);
    expect(verdict.degraded).toEqual([expect.stringMatching(/^No relay holds partition 1 of 2/)]);
  });
});

describe('a saved checkpoint as reported', () => {
  it('takes its time from the resume token, else from when it was saved', () => {
    expect(checkpointReport({ token: tokenAt(ago(5000)), savedAt: ago(1000) }, now)).toEqual({
      saved: true,
      savedAt: ago(1000),
      positionAt: ago(5000),
      positionTimeFrom: 'resume-token',
      ageMs: 5000,
    });
    expect(checkpointReport({ token: 'opaque', savedAt: ago(1000) }, now)).toMatchObject({
      positionTimeFrom: 'saved-at',
      ageMs: 1000,
    });
    expect(checkpointReport({ savedAt: ago(1000) }, now)).toEqual({
      saved: false,
      savedAt: ago(1000),
    });
    expect(checkpointReport(undefined, now)).toEqual({ saved: false });
  });
});
