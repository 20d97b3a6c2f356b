/**
 * A schedule: everything a run depends on, as plain data (fast-check generates and shrinks it;
 * `--seed/--path` replays it). The run's own random choices (latencies, which op a
 * probabilistic fault hits) come from `seed`.
 */

/** How long the generated part of a run lasts (writes and faults happen within it), virtual ms. */
export const ACTIVE_PHASE_MS = 20_000;

export const FAULT_KINDS = [
  'db-transient-before',
  'db-transient-after',
  'db-slow',
  'slow-majority',
  'stepdown',
  'db-timeout',
  'oplog-rollover',
  'cursor-error',
  'kafka-partition-retriable',
  'kafka-ambiguous-ack',
  'kafka-topic-missing',
  'kafka-topic-unauthorized',
  'kafka-oversize-event',
  'kafka-poison-event',
  'broker-outage',
  'slow-ack',
  'crash',
  'crash-at-call',
  'crash-in-timer',
  'pause',
  'clock-skew',
  'clock-drift',
  'extra-relay',
] as const;

/**
 * Churn of a partitioned deployment (only in partitioned schedules, so the single-relay
 * schedules stay what they were): `leave` stops a relay gracefully (`stop()`), the process
 * exits and starts again after `duration`, with `param` partitions when > 0 (a rolling
 * deploy that changes the layout).
 */
export const CHURN_FAULT_KINDS = ['leave'] as const;

/**
 * What a Kafka client meets besides the broker's answers (only in the idempotent family,
 * `idempotent.arbitrary.ts`, so the other families' schedules stay what they were):
 * `kafka-partitions-added` adds `param` partitions to topic `target` at `at` (an operator's
 * `kafka-topics --alter`); the producer's metadata learns it only when it refreshes.
 */
export const KAFKA_CLIENT_FAULT_KINDS = ['kafka-partitions-added'] as const;

/**
 * Tenant databases (only in the tenants family, `tenants.arbitrary.ts`): the `tenants.databases`
 * function lists database `target` from `at` on (`tenant-added`) or no more (`tenant-removed`),
 * or the database is dropped (`database-dropped`: its outbox is gone; the list still names it).
 * `duration`: the sweep interval within which the relay promises to act on it.
 */
export const TENANT_FAULT_KINDS = ['tenant-added', 'tenant-removed', 'database-dropped'] as const;

export type FaultKind =
  | (typeof FAULT_KINDS)[number]
  | (typeof CHURN_FAULT_KINDS)[number]
  | (typeof KAFKA_CLIENT_FAULT_KINDS)[number]
  | (typeof TENANT_FAULT_KINDS)[number];

/**
 * Faults that hit one destination (a topic, a partition) or one aggregate only: the Kafka
 * ones; every other kind disturbs the whole relay. Isolation (f) is judged while these last.
 */
export const TARGETED_FAULT_KINDS: readonly FaultKind[] = FAULT_KINDS.filter((kind) =>
  kind.startsWith('kafka-'),
);

/**
 * A relay target of a `leave` or a `pause`: whichever relay leads when the fault begins (a deploy
 * or a GC pause hits any instance, the leader as well); none leading (one that stops holds the
 * lease but leads no more), the fault does nothing.
 */
export const THE_LEADER = -1;

/** One fault: what, when (virtual ms), for how long, and on what. */
export interface Fault {
  kind: FaultKind;
  at: number;
  duration: number;
  /**
   * The target, by kind: a relay index (crash, crash-at-call, crash-in-timer, pause, clock-skew,
   * clock-drift; `THE_LEADER`: the relay leading when the fault begins, for leave and pause), an aggregate
   * type index (kafka-topic-*, kafka-partitions-added), a type and partition (kafka-partition-retriable,
   * kafka-ambiguous-ack), a transaction (kafka-oversize-event, kafka-poison-event), a tenant database
   * (tenant-added, tenant-removed, database-dropped: modulo the databases).
   */
  target: number;
  /**
   * A second number, by kind: the partition; the call number k; the timer firing k (crash-in-timer:
   * k = param / 2 + 1, after the callback ran when param is odd); the clock step (ms); a rate in %
   * (db-transient-*, db-timeout, cursor-error); the event's index in its transaction (oversize,
   * poison); the clock-rate drift in parts per million (clock-drift: the process's clocks and timers
   * run at 1 + param / 1e6 of real time while it lasts); how long replication to the secondaries
   * stalls before a stepdown (stepdown, ms: commits in that window are rolled back); how many
   * partitions are added (kafka-partitions-added).
   */
  param: number;
}

export interface SimRelayOptionsData {
  batchSize: number;
  maxInFlight: number;
  /** Most bytes held in memory (when the relay has the option). */
  maxInFlightBytes: number;
  /** Most bytes of one publish call (when the relay has the option). */
  maxBatchBytes: number;
  maxAttempts: number;
  backoff: { initialMs: number; maxMs: number; jitter: number };
  sweepIntervalMs: number;
  sweepGraceMs: number;
  checkpointEvery: { events: number; ms: number };
  lease: { durationMs: number; renewMs: number };
  idleMs: number;
  shutdownTimeoutMs: number;
  /** `relay.partitions` of the relays at their start (absent: 1, the single-lease RelayNode). */
  partitions?: number;
  /**
   * `relay.kafka.idempotent` (absent: false): the relay's producer is idempotent, and the
   * simulated cluster checks its sequence numbers (`SimKafkaSender`).
   */
  idempotent?: true;
}

export interface SimTopicData {
  /** The aggregate type; the topic is `sim.<type>`. */
  type: string;
  partitions: number;
}

export interface SimTransactionData {
  /** Virtual ms when the writer begins it (it waits for the writer's previous one). */
  at: number;
  writer: number;
  /** How long the transaction is open (ids are made at its start, the commit is at its end). */
  durationMs: number;
  events: SimEventData[];
  /** Tenants family: the tenant database it writes in (`tenantDatabase(tenant)`). */
  tenant?: number;
  /**
   * Cancellations the transaction makes (`emitter.cancel(eventId)`): each names an event of the
   * schedule by transaction and index (modulo their lengths). Decided by the server when the
   * transaction commits: cancelled only if pending, scheduled and due after the server's now.
   */
  cancels?: Array<{ tx: number; event: number }>;
}

/** One event a transaction emits. */
export interface SimEventData {
  type: number;
  aggregate: number;
  payloadBytes: number;
  /**
   * Scheduled: `availableAt` = the server's clock when the row is written + `delayMs` (the write
   * side's `delayMs`, counted on the server). Negative: an `availableAt` given in the past,
   * within the write side's tolerance. Absent: not scheduled (unless it inherits, below).
   */
  delayMs?: number;
  /**
   * `waitForScheduled: false`: not ordered behind its aggregate's pending scheduled events (its
   * `availableAt` is not raised to theirs). Absent: the write side's order rule applies.
   */
  waitForScheduled?: false;
}

export interface SimWorldData {
  topics: SimTopicData[];
  aggregatesPerType: number;
  writers: number;
  /** Wall-clock skew of each writer (ms; its ObjectIds and `occurredAt`). */
  writerSkewsMs: number[];
  aggregateSequence: boolean;
  /**
   * Without `aggregateSequence`, the writers (app processes with their own ObjectIds) share the
   * aggregates; else, without it, each writer has its own. The relay then reads an aggregate in
   * `_id` order, which across processes is ordered only to the second: what holds is the order of
   * each writer's events and that an event that waits follows the scheduled events it waits for
   * (the write side gives it an `_id` after theirs, `idAfter`).
   */
  sharedAggregates?: boolean;
  oplogWindowMs: number;
  /** Broker limit of one partition's record batch (and of one message). */
  messageMaxBytes: number;
  /** Broker limit of one produce request (over it: the broker closes the connection). */
  requestMaxBytes: number;
  /**
   * The broker's request limit is as tight as the relay's documented bound allows: the larger of
   * `maxBatchBytes` and `messageMaxBytes` + 1 kB (one event alone, oversize ones included), so
   * full publish calls come close to it (absent: a roomy limit, see `normalize`).
   */
  tightRequestLimit?: boolean;
  /** Base one-way latencies, ms. */
  dbLatencyMs: number;
  kafkaLatencyMs: number;
  /** Majority-commit lag, ms. */
  majorityLagMs: number;
  /**
   * Writers of a version before slots: their events carry no `slot` until a relay stamps it.
   * With `aggregateSequence` they share aggregates with the current writers.
   */
  unslottedWriters?: number[];
  /** Tenants family (`tenants` option): each transaction writes in its tenant's database. */
  tenants?: SimTenantsData;
  /**
   * When the `unslottedWriters` are upgraded (virtual ms; absent: never): transactions they
   * begin from then on carry slots, so their aggregates get events of both versions.
   */
  unslottedUntilMs?: number;
}

/** Tenants family: the tenant databases and those the relay's list names at the start. */
export interface SimTenantsData {
  /** How many tenant databases the writers write in. */
  databases: number;
  /** Indexes of the databases listed at the start. */
  listed: number[];
}

/** The name of tenant database `index`. */
export function tenantDatabase(index: number): string {
  return `tenant_${index}`;
}

export interface SimRelayData {
  /** Wall-clock skew of each relay process at start (ms). */
  skewsMs: number[];
}

export interface Schedule {
  seed: number;
  options: SimRelayOptionsData;
  world: SimWorldData;
  relays: SimRelayData;
  transactions: SimTransactionData[];
  faults: Fault[];
}

/** How long after `at` a crash-at-call fault may still fire (if its k-th call comes later, it does not). */
export const CRASH_AT_CALL_WINDOW_MS = 2_000;

/**
 * The clock-rate tolerance the lease documents (lib/relay/lease/lease.keeper.ts): an instance
 * counts itself leader for `durationMs - ceil(renewMs / 3)` of its own elapsed time after a
 * tick, so its local validity ends before the server's expiry only while its clock runs no
 * slower than `1 - ceil(renewMs / 3) / durationMs` of the server's. In parts per million.
 */
export function leaseDriftTolerancePpm(options: SimRelayOptionsData): number {
  return Math.floor((Math.ceil(options.lease.renewMs / 3) / options.lease.durationMs) * 1e6);
}

/** When the last fault ends (faults stop; liveness is measured from here). */
export function faultsEnd(schedule: Schedule): number {
  return schedule.faults.reduce((end, fault) => {
    if (fault.kind === 'kafka-oversize-event') return Math.max(end, fault.at);
    if (fault.kind === 'crash-at-call' || fault.kind === 'crash-in-timer')
      return Math.max(end, fault.at + CRASH_AT_CALL_WINDOW_MS + fault.duration);
    return Math.max(end, fault.at + fault.duration);
  }, 0);
}
