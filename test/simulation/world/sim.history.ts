import type { CancelOutcome } from '../mongo/sim-database';

/**
 * Facts of one run, recorded as they happen, for the invariant checkers and failure reports.
 * Times are virtual ms (= the database server's clock).
 */

/** An event a writer's transaction inserted. */
export interface CommitFact {
  eventId: string;
  docId: string;
  aggregate: string;
  aggregateType: string;
  topic: string;
  sequence?: number;
  /** Oplog position of its transaction; `index` within it. */
  pos: number;
  index: number;
  committedAt: number;
  /** When it became majority-committed (visible to the relay); undefined: not (yet). */
  majorityAt?: number;
  rolledBackAt?: number;
  /** Commit rank of the event in its aggregate (0, 1, 2... in commit order). */
  rank?: number;
  bytes: number;
  oversize: boolean;
  /** The broker fails on it for a while (kafka-poison-event). */
  poison: boolean;
  /** Its slot (undefined: written without one). */
  slot?: number;
  /** Its aggregate's slot (`eventSlot`): the partition it belongs to, slot or not. */
  aggregateSlot: number;
  /** Scheduled: its `availableAt` as stored, virtual ms (= the server's clock). */
  availableAt?: number;
  /** Its `availableAt` was raised by the write side's order rule (or set by it alone). */
  inherited?: boolean;
  /** Emitted with `waitForScheduled: false` (not ordered behind its aggregate's scheduled events). */
  exempt?: boolean;
  /** The writer (app process) that committed it. */
  writer?: number;
  /** The tenant database it was committed in (tenants family; `aggregate` is prefixed with it). */
  database?: string;
}

/** One `emitter.cancel(eventId)` of a writer's transaction, as the server decided it at commit. */
export interface CancelFact {
  /** The event named, `tx:event` of the schedule. */
  label: string;
  /** Undefined: the transaction that emits it had not begun. */
  eventId?: string;
  at: number;
  /** Oplog position of the cancelling transaction. */
  pos: number;
  outcome: CancelOutcome;
  /** The event's `availableAt` then (virtual ms). */
  availableAt?: number;
  majorityAt?: number;
  rolledBackAt?: number;
}

export interface AppendFact {
  eventId: string;
  topic: string;
  partition: number;
  offset: number;
  at: number;
  node: string;
  callId: number;
  /** Appended, but the call reported an error for this partition (REQUEST_TIMED_OUT). */
  ambiguous: boolean;
}

export interface SendCallFact {
  callId: number;
  node: string;
  /** The sending incarnation, as it names itself in leases (`relay-1#2`). */
  owner: string;
  issuedAt: number;
  eventIds: string[];
  appended: string[];
  /** The error type the call rejected with, or undefined when it resolved. */
  error?: string;
  /** The call did not resolve for the caller (crash, or the answer came after a crash). */
  unanswered?: boolean;
  /** Attempts that failed inside the call (kafkajs retried them). */
  failedAttempts: number;
  /** Bytes of the request as the broker counts them (keys, values, headers). */
  bytes: number;
  /** At issue: the caller held no valid lease by the server's clock. */
  issuedWithoutLease?: boolean;
}

/** At the server: applied and answered ok, not applied, or applied but answered with an error. */
export type StoreOpOutcome = 'ok' | 'failed-before' | 'failed-after';

export interface StoreOpFact {
  opId: number;
  node: string;
  owner: string;
  name: string;
  issuedAt: number;
  appliedAt?: number;
  outcome?: StoreOpOutcome;
  /** False when the answer never reached the caller (it crashed first). */
  answered?: boolean;
  /** When the answer reached the caller (virtual time; after a pause, when it woke up). */
  answeredAt?: number;
  /** Fencing number the relay passed (writes). */
  fence?: number | null;
  /** Outbox ids the op names (writes). */
  ids?: string[];
  /** Whether the op is a write of relay state or outbox documents. */
  write: boolean;
  /** At issue: the issuer held no valid lease by server time (for writes). */
  issuedWithoutLease?: boolean;
  /** The lease scope of the op (undefined: the single relay lease). */
  scope?: string;
}

export interface CheckpointFact {
  at: number;
  node: string;
  fencing: number;
  kind: 'claim' | 'save' | 'clear';
  token?: unknown;
  landed: boolean;
  /** The checkpoint's scope (undefined: the single one). */
  scope?: string;
}

export interface LeaseFact {
  at: number;
  owner: string;
  node: string;
  fencing: number;
  kind: 'acquire' | 'renew' | 'release';
  expiresAt: number;
  /** The store op (`StoreOpFact.opId`) that wrote it: when its answer reached the relay. */
  opId?: number;
  /** The lease's scope (undefined: the single relay lease). */
  scope?: string;
}

export interface LogFact {
  at: number;
  node: string;
  context: string;
  level: 'log' | 'warn' | 'error' | 'debug';
  message: string;
}

export interface ProcessFact {
  at: number;
  node: string;
  kind: 'start' | 'crash' | 'restart' | 'pause' | 'resume' | 'clock-step' | 'join' | 'stop';
  detail?: string;
}

export interface OutboxWriteFact {
  at: number;
  node: string;
  opId: number;
  docId: string;
  name: string;
  fence: number | null;
  /** The highest stamp the document carried before this write. */
  stampBefore?: number;
}

/**
 * What passed between the relay and its ports that decides what it holds in memory, in the
 * order it happened (recorded by the simulated ports, never asked of the relay):
 * - `handed`: a read answered to the incarnation `owner` with these outbox documents (change
 *   stream batch, drain page, one aggregate's catch-up page); `relayNow` is the reader's wall
 *   clock then (a catch-up page stops at the first event not yet due on it), `servedAt` the
 *   server's when it answered;
 * - `states`: a pending-state check of `owner` (the stream's events against the collection)
 *   answered: of `asked`, only `pending` are still pending (with their retry markers);
 * - `published`: a Kafka send of `owner` answered without an error (its events are out);
 * - `failed`: a Kafka send (or a topic's metadata request) of `owner` answered with an error;
 *   `refused`: the destinations of its events the broker did not append (their topic, or
 *   `topic#p` when the error is one partition's: leader or replicas unavailable), or the topic asked;
 * - `written`: `owner` issued a write that settles these documents (published, held back,
 *   failure recorded, dead-lettered).
 */
export type PortFlowFact =
  | {
      kind: 'handed';
      at: number;
      owner: string;
      via: 'stream' | 'drain' | 'catch-up';
      /** `availableAt`: a scheduled event's due time (virtual ms, the server's clock). */
      docs: Array<{ docId: string; retryAt?: number; availableAt?: number }>;
      relayNow: number;
      /** When the server answered the read (virtual ms). */
      servedAt: number;
      /** When the relay issued the read (virtual ms): the term that asked held the lease then. */
      issuedAt: number;
    }
  | {
      kind: 'states';
      at: number;
      owner: string;
      asked: string[];
      pending: Array<{ docId: string; retryAt?: number }>;
    }
  | { kind: 'published'; at: number; owner: string; eventIds: string[] }
  | { kind: 'failed'; at: number; owner: string; eventIds: string[]; refused: string[] }
  | { kind: 'written'; at: number; owner: string; name: string; docIds: string[] };

export class SimHistory {
  /** See `PortFlowFact`. */
  readonly portFlow: PortFlowFact[] = [];
  readonly commits = new Map<string, CommitFact>();
  /** Cancellations, in commit order. */
  readonly cancels: CancelFact[] = [];
  readonly appends: AppendFact[] = [];
  readonly sendCalls: SendCallFact[] = [];
  readonly storeOps: StoreOpFact[] = [];
  readonly checkpoints: CheckpointFact[] = [];
  readonly leases: LeaseFact[] = [];
  /** Layout switches that landed (partitioned runs). */
  readonly layoutSwitches: Array<{
    at: number;
    owner: string;
    partitions: number;
    generation: number;
  }> = [];
  readonly logs: LogFact[] = [];
  readonly processes: ProcessFact[] = [];
  readonly outboxWrites: OutboxWriteFact[] = [];
  /** Events marked dead (first step of a dead-letter move), by eventId: when. */
  readonly deadMarked = new Map<string, number>();
  /** Faults of the plan put into effect, by kind. */
  readonly faults = new Map<string, number>();
  /** What the faults did (operations failed, events rolled back, positions lost...), by kind. */
  readonly effects = new Map<string, number>();
  /** A lease taken while another owner's lease was still valid by the server's clock. */
  readonly leaseOverlaps: string[] = [];
  /** Partitions added to a topic (`kafka-partitions-added`): when, and its count since. */
  readonly partitionsAdded: Array<{ at: number; topic: string; partitions: number }> = [];
  /** Calls that broke a port's contract (e.g. a message for a partition the topic does not have). */
  readonly contractViolations: string[] = [];
  /** Unhandled promise rejections seen during the run. */
  readonly unhandled: string[] = [];

  /** Where `note` writes (the run's trace). */
  noteSink?: (line: string) => void;

  /** A line for the trace (lease and checkpoint changes, what the server did). */
  note(line: string): void {
    this.noteSink?.(line);
  }

  countFault(kind: string, count = 1): void {
    this.faults.set(kind, (this.faults.get(kind) ?? 0) + count);
  }

  countEffect(kind: string, count = 1): void {
    this.effects.set(kind, (this.effects.get(kind) ?? 0) + count);
  }

  /** First append time per eventId. */
  firstAppends(): Map<string, AppendFact> {
    const first = new Map<string, AppendFact>();
    for (const append of this.appends)
      if (!first.has(append.eventId)) first.set(append.eventId, append);
    return first;
  }

  /**
   * Events whose cancellation counts: the server cancelled them (pending, scheduled, not due)
   * in a transaction that became majority-committed and was never rolled back. By eventId: when
   * it committed.
   */
  cancelled(): Map<string, CancelFact> {
    const result = new Map<string, CancelFact>();
    for (const fact of this.cancels) {
      if (fact.outcome !== 'cancelled' || fact.eventId === undefined) continue;
      if (fact.majorityAt === undefined || fact.rolledBackAt !== undefined) continue;
      result.set(fact.eventId, fact);
    }
    return result;
  }

  /** Events that count as committed: majority-committed and never rolled back. */
  committed(): CommitFact[] {
    return [...this.commits.values()].filter(
      (commit) => commit.majorityAt !== undefined && commit.rolledBackAt === undefined,
    );
  }
}
