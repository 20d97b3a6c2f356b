import { SINK_BACKOFF, TOPIC_BACKOFF } from '../consumer/flow/consumer-sink';
import { backoffDelay } from './backoff';

/**
 * The delays the relay and the consumer wait between retries, pinned for a grid of attempts,
 * policies and random draws when each had its own function (the relay's with jitter, the
 * consumer's without): the one backoff gives both the same values.
 */
const ATTEMPTS = [-1, 0, 1, 2, 3, 7, 12, 31, 32, 41, 100];
const RANDOMS = [0, 0.25, 0.5, 0.999];

describe("the relay's backoff (jittered: one random draw per delay, rounded)", () => {
  const pinned: [{ initialMs: number; maxMs: number; jitter: number }, number[][]][] = [
    [
      { initialMs: 100, maxMs: 1000, jitter: 0.2 },
      [
        [80, 80, 80, 160, 320, 800, 800, 800, 800, 800, 800],
        [90, 90, 90, 180, 360, 900, 900, 900, 900, 900, 900],
        [100, 100, 100, 200, 400, 1000, 1000, 1000, 1000, 1000, 1000],
        [120, 120, 120, 240, 480, 1000, 1000, 1000, 1000, 1000, 1000],
      ],
    ],
    [
      { initialMs: 500, maxMs: 60_000, jitter: 0.2 },
      [
        [400, 400, 400, 800, 1600, 25600, 48000, 48000, 48000, 48000, 48000],
        [450, 450, 450, 900, 1800, 28800, 54000, 54000, 54000, 54000, 54000],
        [500, 500, 500, 1000, 2000, 32000, 60000, 60000, 60000, 60000, 60000],
        [600, 600, 600, 1200, 2399, 38387, 60000, 60000, 60000, 60000, 60000],
      ],
    ],
    [
      { initialMs: 20, maxMs: 40, jitter: 0 },
      RANDOMS.map(() => [20, 20, 20, 40, 40, 40, 40, 40, 40, 40, 40]),
    ],
    [
      { initialMs: 7, maxMs: 86_400_000, jitter: 1 },
      [
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [4, 4, 4, 7, 14, 224, 7168, 43200000, 43200000, 43200000, 43200000],
        [7, 7, 7, 14, 28, 448, 14336, 86400000, 86400000, 86400000, 86400000],
        [14, 14, 14, 28, 56, 895, 28643, 86400000, 86400000, 86400000, 86400000],
      ],
    ],
  ];
  it.each(pinned)('%j', (policy, expected) => {
    const draws: number[] = [];
    const got = RANDOMS.map((r) =>
      ATTEMPTS.map((attempts) => backoffDelay(attempts, policy, () => (draws.push(r), r))),
    );
    expect(got).toEqual(expected);
    // One draw per delay, even without jitter: the simulation's seeded random stays in step.
    expect(draws).toHaveLength(RANDOMS.length * ATTEMPTS.length);
  });
});

describe("the consumer's backoff (no jitter: no random draw, not rounded)", () => {
  const pinned: [{ initialMs: number; maxMs: number }, number[]][] = [
    [SINK_BACKOFF, [1000, 1000, 1000, 2000, 4000, 60000, 60000, 60000, 60000, 60000, 60000]],
    [
      TOPIC_BACKOFF,
      [5000, 5000, 5000, 10000, 20000, 300000, 300000, 300000, 300000, 300000, 300000],
    ],
    [
      { initialMs: 200, maxMs: 5000 },
      [200, 200, 200, 400, 800, 5000, 5000, 5000, 5000, 5000, 5000],
    ],
    [{ initialMs: 1, maxMs: 600_000 }, [1, 1, 1, 2, 4, 64, 2048, 600000, 600000, 600000, 600000]],
  ];
  it.each(pinned)('%j', (policy, expected) => {
    const random = jest.fn(() => 0.5);
    expect(ATTEMPTS.map((attempt) => backoffDelay(attempt, policy, random))).toEqual(expected);
    expect(random).not.toHaveBeenCalled();
  });
});
