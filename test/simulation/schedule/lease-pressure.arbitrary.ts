import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import { THE_LEADER } from './schedule.types';
import type { Fault, Schedule, SimTransactionData } from './schedule.types';

/**
 * Lease pressure (issue 35): the moments where a relay must look at its lease, made frequent
 * instead of left to luck. Single lease, 2-3 relays, a short lease, a backlog of 30-70
 * transactions being published with slow acknowledgements, and on top of it:
 * - one or two graceful stops (`leave`) of the relay leading then, with `shutdownTimeoutMs`
 *   from 0 (publishes abandoned at once) to 3 leases (the stop outlives the lease unless it
 *   renews);
 * - a pause (GC) of the leader, maybe one of the leader a lease or more later too, from
 *   shortly after one partition of the backlog's topic began to refuse with a retriable error:
 *   kafkajs retries the call across the pause, the publisher then sends the other partitions'
 *   part again (checking the lease first), and what was acknowledged is marked after the pause;
 * - maybe slow database calls (renewals that land late, terms that take long to end).
 * Each run aims at one moment (`AIMS`, half and half): a stop with acknowledgements pending
 * (right after the backlog's first sends, acknowledged between the ends of the relay's own
 * view of its last renewal and the server's; the stop outlasts a lease, the pause is shorter
 * than one, the partition refuses only after the stop), or a pause that outlasts the lease
 * (1-3 leases) within the backlog's busy time, the partition refusing until after it, with
 * transactions of several aggregates (a call of several partitions in flight at the pause).
 * (e), (g) and (k) judge what is sent, written and marked around these moments.
 */

/** What a run aims at, and how its stops and pauses look for it. */
interface Aim {
  /** `shutdownTimeoutMs` in leases, at least (the drawn one, or this). */
  minStopLeases: number;
  /** The pause's length in leases. */
  pauseLeases: { min: number; max: number };
  /** Its share of the runs. */
  weight: number;
}

const AIMS: Readonly<Record<string, Aim>> = {
  /**
   * A graceful stop with acknowledgements pending: it settles them (renewing its lease) before
   * it releases, so the stop must outlast an acknowledgement (a lease or more); the pause stays
   * shorter than the lease (a take-over in it would be a cause of duplicates of its own).
   */
  stop: { minStopLeases: 1, pauseLeases: { min: 0.5, max: 0.8 }, weight: 1 },
  /**
   * A pause that outlasts the lease while a call is in flight: after it, the call's answer
   * comes, the publisher would send the rest again, and what was acknowledged would be marked.
   */
  pause: { minStopLeases: 0, pauseLeases: { min: 1, max: 3 }, weight: 1 },
};

const pressureArbitrary = fc.record({
  base: scheduleArbitrary,
  durationMs: fc.integer({ min: 1_000, max: 3_000 }),
  renewDivisor: fc.integer({ min: 3, max: 6 }),
  /**
   * The moment the run aims at (`AIMS`): a stop with acknowledgements pending, or a pause that
   * outlasts the lease with a call in flight.
   */
  aim: fc.oneof(
    ...Object.entries(AIMS).map(([name, { weight }]) => ({ arbitrary: fc.constant(name), weight })),
  ),
  /** `shutdownTimeoutMs` in leases (0: abandon at once), as `AIMS[aim].stopLeases` allows. */
  stopLeases: fc.constantFrom(0, 0.3, 1, 1.5, 3),
  relays: fc.array(fc.integer({ min: -1_500, max: 1_500 }), { minLength: 2, maxLength: 3 }),
  burst: fc.record({
    at: fc.integer({ min: 500, max: 6_000 }),
    count: fc.integer({ min: 30, max: 70 }),
    spreadMs: fc.integer({ min: 100, max: 3_000 }),
    aggregates: fc.integer({ min: 4, max: 8 }),
  }),
  slowAckMs: fc.integer({ min: 100, max: 1_500 }),
  /**
   * Aimed at the pause, in two schedules of three: acknowledgements slowed instead to about
   * what is left of the lease: the lease minus this share of `renewMs`. (Aimed at the stop, the
   * acknowledgements are aimed at the lease's renewals, `ackOf`.)
   */
  ackNearLapse: fc.option(fc.double({ min: 1 / 6, max: 5 / 6, noNaN: true }), { freq: 3 }),
  /** Of the relay leading then (a stop of another one changes nothing around the lease). */
  stops: fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 2 }),
  restartMs: fc.integer({ min: 0, max: 3_000 }),
  /** Of the relay leading then; maybe of the one leading later too. */
  pause: fc.record({
    offset: fc.integer({ min: 0, max: 3_000 }),
    /** A share of `AIMS[aim].pauseLeases`' range. */
    leases: fc.double({ min: 0, max: 1, noNaN: true }),
    /** When the second pause begins, in leases after the first began (past a take-over). */
    next: fc.option(fc.double({ min: 1, max: 2.5, noNaN: true })),
  }),
  /**
   * Sends failing (retried by kafkajs within the call): from an acknowledgement's delay and
   * `beforeMs` before the pause (a call refused then is answered and retried around the pause)
   * to `afterMs` after it began.
   */
  refusing: fc.record({
    beforeMs: fc.integer({ min: 20, max: 1_500 }),
    afterMs: fc.integer({ min: 300, max: 4_000 }),
    partition: fc.nat({ max: 3 }),
  }),
  slowDb: fc.option(
    fc.record({
      offset: fc.integer({ min: 0, max: 3_000 }),
      durationMs: fc.integer({ min: 500, max: 5_000 }),
      param: fc.integer({ min: 100, max: 1_500 }),
    }),
  ),
});

type Pressure = typeof pressureArbitrary extends fc.Arbitrary<infer T> ? T : never;

function backlog(raw: Pressure, writers: number): SimTransactionData[] {
  const { burst } = raw;
  return Array.from({ length: burst.count }, (_, index) => ({
    at: burst.at + Math.floor((index * burst.spreadMs) / burst.count),
    writer: index % writers,
    durationMs: 5,
    // Aimed at the pause: each transaction has events of up to 6 aggregates (of several
    // partitions), which the stream hands together, so that a call carries several partitions'
    // events (with one event per transaction, the calls in flight when the pause began mostly
    // had one event each, and none was answered in part).
    events: Array.from(
      { length: raw.aim === 'pause' ? Math.min(6, burst.aggregates) : 1 },
      (_, event) => ({
        type: 0,
        aggregate: (index + event) % burst.aggregates,
        payloadBytes: 50 + (((index + event) * 53) % 400),
      }),
    ),
  }));
}

/** `lease.renewMs`. */
function renewMsOf(raw: Pressure): number {
  return Math.round(raw.durationMs / raw.renewDivisor);
}

/** How long the broker takes to acknowledge a call of the backlog. */
function ackOf(raw: Pressure): number {
  if (raw.aim !== 'stop') {
    return raw.ackNearLapse === null
      ? raw.slowAckMs
      : Math.round(raw.durationMs - raw.ackNearLapse * renewMsOf(raw));
  }
  // Aimed at the stop: the last calls sent before the first stop are acknowledged after the
  // leader's own view of its lease ran out and before the server's (`LeaseKeeper`: the local
  // validity is `durationMs - ceil(renewMs / 3)` from the start of the last renewal, the
  // server's `durationMs` from its read of the server's time, a little later). A call sent at
  // the stop is acknowledged at the start of the last renewal plus `durationMs`, one sent up to
  // `ceil(renewMs / 3)` before it still after the local view ran out: a stop that does not
  // renew its lease leaves them unmarked, and the next leader sends them again.
  const stop = Math.min(
    ...raw.stops.map((offset, index) => stopAt(raw, raw.durationMs, offset, index)),
  );
  return leaseTickBefore(raw, stop) + raw.durationMs - stop;
}

/**
 * When the last lease renewal of the relay leading at `at` began, as the schedule can tell:
 * each relay ticks every `renewMs` from its first grant (about `FIRST_GRANT_MS` after the start,
 * for the relays that start with the world), or, a paused leader, from the end of its pause
 * (its timer fires then, and the next one `renewMs` later).
 */
function leaseTickBefore(raw: Pressure, at: number): number {
  const renewMs = renewMsOf(raw);
  const ended = pauses(raw, raw.durationMs).filter(([, to]) => to <= at);
  const from = ended.length > 0 ? ended[ended.length - 1][1] : FIRST_GRANT_MS;
  return from + Math.floor((at - from) / renewMs) * renewMs;
}

/** When the first relay's first lease grant lands (its start-up's few database round trips). */
const FIRST_GRANT_MS = 17;

/**
 * When the first pause begins. Aimed at the pause: within the first half of the backlog's busy
 * time (its spread and an acknowledgement), from 15% of it on, when calls of several partitions
 * are in flight (later, the backlog is mostly out and fewer runs failed with the send check
 * removed).
 */
function pauseAt(raw: Pressure): number {
  if (raw.aim !== 'pause') return raw.burst.at + raw.pause.offset;
  const busy = raw.burst.spreadMs + ackOf(raw);
  return raw.burst.at + Math.round(busy * (0.15 + (0.35 * raw.pause.offset) / 3_000));
}

/** The pauses' windows, [from, to]. */
function pauses(raw: Pressure, durationMs: number): Array<[number, number]> {
  const at = pauseAt(raw);
  const { min, max } = AIMS[raw.aim].pauseLeases;
  const duration = Math.round((min + raw.pause.leases * (max - min)) * durationMs);
  const windows: Array<[number, number]> = [[at, at + duration]];
  if (raw.pause.next !== null) {
    const next = at + Math.round(raw.pause.next * durationMs);
    windows.push([next, next + duration]);
  }
  return windows;
}

/**
 * When the backlog's first wave of sends is out: its first event of each aggregate committed,
 * plus `STREAM_DELAY_MS` for the stream to bring it.
 */
function firstWaveSent(raw: Pressure): number {
  const { burst } = raw;
  const lastFirst = Math.min(burst.aggregates, burst.count) - 1;
  return burst.at + Math.floor((lastFirst * burst.spreadMs) / burst.count) + STREAM_DELAY_MS;
}

/** About how long a commit takes to reach the relay through its stream and be sent. */
const STREAM_DELAY_MS = 60;

/**
 * When a stop comes: not within a pause (a process in a pause runs nothing, its stop included;
 * the leader may be the paused one).
 */
function stopAt(raw: Pressure, durationMs: number, offset: number, index: number): number {
  // Aimed at the stop: the first right after the backlog's first wave of sends (one event of
  // each aggregate: the next waits for its acknowledgement), the second `offset` later.
  let at =
    raw.aim === 'stop' ? firstWaveSent(raw) + (index === 0 ? 0 : offset) : raw.burst.at + offset;
  for (const [from, to] of pauses(raw, durationMs)) if (at >= from && at <= to) at = to + 1;
  return at;
}

function faults(raw: Pressure, durationMs: number): Fault[] {
  const { burst } = raw;
  const at = (offset: number) => burst.at + offset;
  const ackMs = ackOf(raw);
  const list: Fault[] = [
    {
      kind: 'slow-ack',
      at: burst.at,
      duration: burst.spreadMs + 4_000,
      target: 0,
      param: ackMs,
    },
    ...raw.stops.map((offset, index) => ({
      kind: 'leave' as const,
      at: stopAt(raw, durationMs, offset, index),
      duration: raw.restartMs,
      target: THE_LEADER,
      param: 0,
    })),
    ...pauses(raw, durationMs).map(([from, to]) => ({
      kind: 'pause' as const,
      at: from,
      duration: to - from,
      target: THE_LEADER,
      param: 0,
    })),
  ];
  const { beforeMs, afterMs, partition } = raw.refusing;
  // Aimed at the pause: 0.7-1.6 s before the acknowledgement that comes as the pause begins
  // (at 20-700 ms, the calls in flight then were mostly sent before the refusal, and answered
  // in full: 1 failing run in 5 of those against 1 in 3).
  const before = raw.aim === 'pause' ? 700 + Math.round(((beforeMs - 20) * 900) / 1_480) : beforeMs;
  // Aimed at the stop: not before the first stop's acknowledgements (a call answered in part
  // is a cause of duplicates of its own, and hides what the stop did with the others).
  const firstStop = Math.min(...list.filter((f) => f.kind === 'leave').map((f) => f.at));
  const refusingAt =
    raw.aim === 'stop'
      ? Math.max(firstStop + ackMs + 200, pauseAt(raw) - ackMs - before)
      : Math.max(0, pauseAt(raw) - ackMs - before);
  // Aimed at the pause: past its end, so that the call in flight across it fails after all.
  const refusingUntil = Math.max(
    refusingAt,
    raw.aim === 'pause' ? pauses(raw, durationMs)[0][1] : pauseAt(raw),
  );
  list.push({
    kind: 'kafka-partition-retriable',
    at: refusingAt,
    duration: refusingUntil + afterMs - refusingAt,
    target: 0,
    param: partition,
  });
  if (raw.slowDb) {
    const { offset, durationMs: duration, param } = raw.slowDb;
    list.push({ kind: 'db-slow', at: at(offset), duration, target: 0, param });
  }
  return list;
}

export const leasePressureSchedules: fc.Arbitrary<Schedule> = pressureArbitrary.map((raw) => {
  const { base, durationMs } = raw;
  const renewMs = renewMsOf(raw);
  const options = {
    ...base.options,
    lease: { durationMs, renewMs },
    shutdownTimeoutMs: Math.round(
      Math.max(raw.stopLeases, AIMS[raw.aim].minStopLeases) * durationMs,
    ),
  };
  // The backlog's topic has 2-3 partitions: a call to several, one of which refuses, is
  // answered in part, and the publisher sends the rest again (a send after the pause).
  const [first, ...others] = base.world.topics;
  const topics = [{ ...first, partitions: Math.max(2, first.partitions) }, ...others];
  return normalize({
    ...base,
    options,
    world: { ...base.world, topics },
    relays: { skewsMs: raw.relays },
    transactions: [...base.transactions.slice(0, 5), ...backlog(raw, base.world.writers)],
    faults: faults(raw, durationMs),
  });
});
