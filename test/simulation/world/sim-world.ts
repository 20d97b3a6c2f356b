import type { RelayStatus } from '../../../lib/relay/relay.status';
import { RealTimeGuard } from '../core/real-time.guard';
import type { RealTimeUse } from '../core/real-time.guard';
import { SimRandom } from '../core/sim.random';
import { SimScheduler } from '../core/sim.scheduler';
import type { SimStop } from '../core/sim.scheduler';
import { SimTrace } from '../core/sim.trace';
import { messageBytes, SimKafkaCluster } from '../kafka/sim-kafka.cluster';
import { SimKafkaSender } from '../kafka/sim-kafka.sender';
import { SimChangeStreams } from '../mongo/sim-change-streams';
import { SimChangeSource } from '../mongo/sim-change.source';
import { SimDatabase } from '../mongo/sim-database';
import type { SimOutboxDoc } from '../mongo/sim-database';
import { SimMongoConnection } from '../mongo/sim-mongo.connection';
import { SimOutboxStore } from '../mongo/sim-outbox.store';
import { SimPartitionPorts } from '../mongo/sim-partitions.store';
import { SimStateStore } from '../mongo/sim-state.store';
import { SimTenantPorts } from '../mongo/sim-tenant.ports';
import { SIM_TOPIC_PREFIX, SimWriters } from '../mongo/sim-writers';
import { SimProcess } from '../process/sim-process';
import { ActiveFaults } from '../schedule/active-faults';
import { CRASH_AT_CALL_WINDOW_MS, faultsEnd, THE_LEADER } from '../schedule/schedule.types';
import type { Fault, Schedule } from '../schedule/schedule.types';
import { toKafkaMessage } from '../../../lib/publisher/kafka-message.mapper';
import type { CheckpointFact } from './sim.history';
import { SimHistory } from './sim.history';
import { SimTenants } from './sim-tenants';
import type { RelayFactory, RelayUnderTest } from './relay-under-test';

/** The `crash` detail of a process that exits after its graceful `stop()` returned (not a crash). */
export const GRACEFUL_EXIT = 'left the group (graceful stop, then exit)';

/** Watches a run: called on checkpoint writes that land and after every step. */
export interface SimMonitor {
  onCheckpoint?(world: SimWorld, fact: CheckpointFact): void;
  afterStep?(world: SimWorld): void;
  /** At the end of the run, before the relays are stopped. */
  beforeStop?(world: SimWorld): void;
}

/** One relay process of the run, with its current incarnation. */
export interface SimNode {
  process: SimProcess;
  relay?: RelayUnderTest;
  owner?: string;
  /** Restart delay after the next crash. */
  restartDelayMs: number;
  /** The node was stopped at the end of the run (stop() returned). */
  stopped: boolean;
  /** `relay.partitions` of its next incarnation (partitioned runs). */
  partitions?: number;
  /** A graceful stop (`leave` fault) is under way. */
  leaving?: boolean;
}

export interface SimRunOutcome {
  stop: SimStop;
  /** When every committed event was published or dead-lettered (undefined: never). */
  resolvedAt?: number;
  endedAt: number;
  steps: number;
  traceHash: string;
  realTimeUses: readonly RealTimeUse[];
  /** Nodes whose `stop()` did not finish or threw. */
  stopProblems: string[];
}

/** Run lengths derived from a schedule (see `livenessBound`). */
export interface SimTiming {
  faultsEnd: number;
  /**
   * When the last fault's after-effects are over: calls issued while the database or the
   * broker was slow still take that long (2 x the slow one-way delay), a slow majority still
   * lags, kafkajs' own retries still run (about 1 s).
   */
  quietAt: number;
  writesEnd: number;
  /** When the last scheduled event is due at the latest (its transaction's end + its delay). */
  dueEnd: number;
  /** Virtual ms after max(quietAt, writesEnd) within which every committed event must be out. */
  bound: number;
  /** How long the run goes on after everything is out (for "no silent stop"). */
  settle: number;
}

/**
 * The liveness bound (invariant a), from the options: once faults stopped, a relay that lost
 * its leader waits for the lease to expire (durationMs) and its next acquire tick (renewMs);
 * an event that failed waits at most backoff.maxMs; one the stream missed is found by the
 * sweep after sweepGraceMs, at its next round (sweepIntervalMs); reopening the stream and
 * draining take a few idle reads; plus slack for latencies and the backlog
 * (`50 ms x events`, at least 5 s).
 */
export function livenessBound(schedule: Schedule): number {
  const { options } = schedule;
  const events = schedule.transactions.reduce((sum, tx) => sum + tx.events.length, 0);
  return (
    handOverMs(schedule) +
    options.lease.durationMs +
    options.lease.renewMs +
    options.backoff.maxMs +
    options.sweepIntervalMs +
    options.sweepGraceMs +
    4 * options.idleMs +
    Math.max(5_000, 50 * events) +
    maxWriterSkew(schedule)
  );
}

/** A writer's clock ahead of the relay's makes its events look newer to the sweep. */
function maxWriterSkew(schedule: Schedule): number {
  return Math.max(0, ...schedule.world.writerSkewsMs.map((skew) => Math.abs(skew)));
}

/**
 * Partitioned runs: after the last churn, partitions change hands (a graceful stop may take
 * `shutdownTimeoutMs`, a hand-over a few membership ticks, a layout switch one lease period).
 */
function handOverMs(schedule: Schedule): number {
  const { options } = schedule;
  if (options.partitions === undefined) return 0;
  const backfill = schedule.world.unslottedWriters?.length ? options.sweepIntervalMs : 0;
  return (
    options.lease.durationMs + 6 * options.lease.renewMs + options.shutdownTimeoutMs + backfill
  );
}

export function timingOf(schedule: Schedule): SimTiming {
  const writesEnd = schedule.transactions.reduce(
    (end, tx) => Math.max(end, tx.at + tx.durationMs),
    0,
  );
  const dueEnd = schedule.transactions.reduce(
    (end, tx) =>
      Math.max(
        end,
        ...tx.events.map((event) => tx.at + tx.durationMs + Math.max(0, event.delayMs ?? 0)),
      ),
    0,
  );
  const { options } = schedule;
  const end = faultsEnd(schedule);
  const slowest = (kind: Fault['kind']): number =>
    Math.max(
      0,
      ...schedule.faults.filter((fault) => fault.kind === kind).map((fault) => fault.param),
    );
  return {
    faultsEnd: end,
    quietAt: end + 2 * slowest('db-slow') + slowest('slow-ack') + slowest('slow-majority') + 1_000,
    writesEnd,
    dueEnd,
    bound: livenessBound(schedule),
    settle:
      handOverMs(schedule) +
      options.lease.durationMs +
      2 * options.lease.renewMs +
      options.sweepIntervalMs +
      2 * options.idleMs +
      500,
  };
}

/**
 * The whole simulated world of one run: scheduler, database, change streams, writers, Kafka
 * and 1-3 relay processes built by `relayFactory`, with the schedule's faults applied.
 */
export class SimWorld {
  readonly trace: SimTrace;
  readonly scheduler: SimScheduler;
  readonly history = new SimHistory();
  readonly faults: ActiveFaults;
  readonly db: SimDatabase;
  readonly streams: SimChangeStreams;
  readonly kafka: SimKafkaCluster;
  readonly writers: SimWriters;
  readonly nodes: SimNode[] = [];
  readonly timing: SimTiming;
  /** Tenants family: the tenant databases and the relay's list of them. */
  readonly tenants?: SimTenants;
  private readonly random: SimRandom;
  private readonly monitors: SimMonitor[] = [];
  private resolvedAt?: number;
  private joined = 0;

  constructor(
    readonly schedule: Schedule,
    private readonly relayFactory: RelayFactory,
    options: { keepTrace?: boolean } = {},
  ) {
    this.trace = new SimTrace({ keep: options.keepTrace });
    this.scheduler = new SimScheduler(this.trace);
    this.history.noteSink = (line) => this.trace.record(this.scheduler.now, `db ${line}`);
    this.random = new SimRandom(schedule.seed);
    this.faults = new ActiveFaults(schedule.faults);
    this.timing = timingOf(schedule);
    const world = schedule.world;
    const dbRandom = this.random.fork('db');
    const eventsOf = (kind: Fault['kind']): Set<string> =>
      new Set(
        schedule.faults
          .filter((fault) => fault.kind === kind)
          .map((fault) => `${fault.target}:${fault.param}`),
      );
    this.db = new SimDatabase(this.scheduler, this.history, {
      aggregateSequence: world.aggregateSequence,
      oplogWindowMs: () => {
        const shrunk = this.faults.at('oplog-rollover', this.scheduler.now);
        return shrunk.length > 0
          ? Math.min(world.oplogWindowMs, ...shrunk.map((fault) => fault.param))
          : world.oplogWindowMs;
      },
      majorityLagMs: () => {
        const slow = this.faults.maxParam('slow-majority', this.scheduler.now);
        if (slow > 0) this.history.countEffect('slow-majority');
        return dbRandom.int(0, world.majorityLagMs) + slow + this.stallBeforeStepdown();
      },
      topicOf: (type) => `${SIM_TOPIC_PREFIX}${type}`,
      sizeOf: (doc) => wireBytes(doc),
      isOversize: (doc) => wireBytes(doc) > world.messageMaxBytes,
      isPoison: (doc) => typeof doc.payload.poison === 'string',
    });
    this.streams = new SimChangeStreams(
      this.scheduler,
      this.db,
      this.history,
      this.random.fork('streams'),
    );
    this.kafka = new SimKafkaCluster(
      this.scheduler,
      this.history,
      this.faults,
      this.random.fork('kafka'),
      { messageMaxBytes: world.messageMaxBytes, requestMaxBytes: world.requestMaxBytes },
      world.topics.map((topic, typeIndex) => ({
        name: `${SIM_TOPIC_PREFIX}${topic.type}`,
        typeIndex,
        partitions: topic.partitions,
      })),
    );
    if (world.tenants)
      this.tenants = new SimTenants(world.tenants, this.scheduler, this.db, this.history);
    const tenants = this.tenants;
    this.writers = new SimWriters(
      this.scheduler,
      this.db,
      world,
      schedule.transactions,
      eventsOf('kafka-oversize-event'),
      eventsOf('kafka-poison-event'),
      tenants && ((tenant) => tenants.nameOf(tenant)),
    );
  }

  /**
   * Replication to the secondaries stalls `param` ms before a stepdown (the primary lost them):
   * a commit in that window is not majority-committed before the stepdown, which rolls it back.
   */
  private stallBeforeStepdown(): number {
    const now = this.scheduler.now;
    let stall = 0;
    for (const fault of this.faults.all('stepdown'))
      if (fault.param > 0 && fault.at - fault.param <= now && now < fault.at)
        stall = Math.max(stall, fault.at - now + 1);
    return stall;
  }

  addMonitor(monitor: SimMonitor): void {
    this.monitors.push(monitor);
  }

  get now(): number {
    return this.scheduler.now;
  }

  /** Whether every committed event was out at some point (the run then settled). */
  get resolved(): boolean {
    return this.resolvedAt !== undefined;
  }

  /** Relays run as `PartitionedRelayNode` over partition ports (`options.partitions` set). */
  get partitioned(): boolean {
    return this.schedule.options.partitions !== undefined;
  }

  /** Statuses of the live relay incarnations. */
  statuses(): Array<{ node: SimNode; status: RelayStatus }> {
    const result: Array<{ node: SimNode; status: RelayStatus }> = [];
    for (const node of this.nodes) {
      if (!node.relay || !node.process.isAlive) continue;
      result.push({ node, status: node.relay.status() });
    }
    return result;
  }

  /** Whether every committed event so far is on Kafka or marked dead. */
  allResolved(): boolean {
    if (!this.writers.done) return false;
    const appended = this.appendedIds();
    const cancelled = this.history.cancelled();
    for (const commit of this.history.commits.values()) {
      if (commit.rolledBackAt !== undefined || cancelled.has(commit.eventId)) continue;
      if (this.tenants?.excuse(commit)) continue;
      if (commit.majorityAt === undefined) return false;
      if (!appended.has(commit.eventId) && !this.history.deadMarked.has(commit.eventId))
        return false;
    }
    return true;
  }

  private appendedCache = { length: -1, ids: new Set<string>() };

  /** eventIds appended to Kafka so far. */
  appendedIds(): Set<string> {
    const cache = this.appendedCache;
    if (cache.length !== this.history.appends.length) {
      for (let i = Math.max(0, cache.length); i < this.history.appends.length; i++)
        cache.ids.add(this.history.appends[i].eventId);
      cache.length = this.history.appends.length;
    }
    return cache.ids;
  }

  async run(): Promise<SimRunOutcome> {
    const guard = new RealTimeGuard();
    const unhandled = (reason: unknown): void => {
      this.history.unhandled.push(
        `${this.scheduler.now}: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
      );
    };
    process.on('unhandledRejection', unhandled);
    guard.install();
    try {
      this.setUp();
      const { quietAt: quiet, writesEnd, dueEnd, bound, settle } = this.timing;
      // Scheduled events are due up to `dueEnd`; the due reader looks within `recheckMs` (5 s).
      const deadline = Math.max(quiet, writesEnd, dueEnd + 6_000) + bound;
      let stop = await this.scheduler.run({
        until: deadline,
        done: () => this.scheduler.now >= quiet && this.checkResolved(),
        afterStep: () => this.afterStep(),
      });
      if (stop === 'done') {
        stop = await this.scheduler.run({
          until: this.scheduler.now + settle,
          afterStep: () => this.afterStep(),
        });
        if (stop === 'time-limit') stop = 'done';
      } else {
        this.checkResolved();
      }
      for (const monitor of this.monitors) monitor.beforeStop?.(this);
      const stopProblems = await this.stopAll();
      return {
        stop,
        resolvedAt: this.resolvedAt,
        endedAt: this.scheduler.now,
        steps: this.scheduler.steps,
        traceHash: this.trace.digest(),
        realTimeUses: guard.recorded,
        stopProblems,
      };
    } finally {
      guard.uninstall();
      process.off('unhandledRejection', unhandled);
    }
  }

  private checkResolved(): boolean {
    if (this.resolvedAt !== undefined) return true;
    if (!this.allResolved()) return false;
    this.resolvedAt = this.scheduler.now;
    return true;
  }

  private afterStep(): void {
    for (const monitor of this.monitors) monitor.afterStep?.(this);
  }

  private setUp(): void {
    this.writers.start();
    this.schedule.relays.skewsMs.forEach((skew) => this.addNode(skew, 0));
    for (const fault of this.schedule.faults) this.arm(fault);
  }

  private addNode(skewMs: number, at: number): SimNode {
    const index = this.nodes.length;
    const proc = new SimProcess(
      `relay-${index + 1}`,
      this.scheduler,
      this.history,
      this.trace,
      skewMs,
    );
    const node: SimNode = {
      process: proc,
      restartDelayMs: 1000,
      stopped: false,
      partitions: this.schedule.options.partitions,
    };
    this.nodes.push(node);
    proc.onCrash = () => {
      node.relay = undefined;
      this.scheduler.after(node.restartDelayMs, proc.name, 'restart', () => {
        if (proc.isAlive || node.stopped) return;
        this.history.processes.push({ at: this.scheduler.now, node: proc.name, kind: 'restart' });
        this.startIncarnation(node);
      });
    };
    this.scheduler.at(at, proc.name, 'start', () => {
      this.history.processes.push({ at: this.scheduler.now, node: proc.name, kind: 'start' });
      this.startIncarnation(node);
    });
    return node;
  }

  private startIncarnation(node: SimNode): void {
    const proc = node.process;
    proc.boot(this.random.int(1_000, 1_000_000_000));
    const owner = `${proc.name}#${proc.incarnation}`;
    const random = this.random.fork(owner);
    const connection = new SimMongoConnection(
      this.scheduler,
      this.db,
      this.history,
      this.faults,
      proc,
      random.fork('db'),
      this.schedule.world.dbLatencyMs,
      owner,
    );
    const onCheckpoint = (fact: CheckpointFact): void => {
      for (const monitor of this.monitors) monitor.onCheckpoint?.(this, fact);
    };
    const options = this.partitioned
      ? { ...this.schedule.options, partitions: node.partitions }
      : this.schedule.options;
    const context = {
      connection,
      db: this.db,
      history: this.history,
      streams: this.streams,
      faults: this.faults,
      random: random.fork('partitions'),
      node: proc.name,
      onCheckpoint,
      stream: { batchSize: options.batchSize, idleMs: options.idleMs },
    };
    const appState = (): SimStateStore =>
      new SimStateStore(connection, this.db, this.history, proc.name, onCheckpoint);
    const tenants = this.tenants;
    const relay = this.relayFactory({
      owner,
      outbox: new SimOutboxStore(connection, this.db, this.history),
      state: appState(),
      changes: new SimChangeSource(
        connection,
        this.streams,
        this.history,
        this.faults,
        random.fork('changes'),
        { batchSize: options.batchSize, idleMs: options.idleMs },
      ),
      sender: new SimKafkaSender(
        this.scheduler,
        this.kafka,
        this.history,
        this.faults,
        proc,
        random.fork('kafka'),
        {
          latencyMs: this.schedule.world.kafkaLatencyMs,
          retries: 2,
          retryDelayMs: 100,
          idempotent: this.schedule.options.idempotent === true,
          holdsLease: () =>
            this.db.holdsLease(owner, undefined, this.partitioned ? 'any' : undefined),
        },
      ),
      clock: proc.clock(),
      loggers: proc.loggers(),
      random: (() => {
        const relayRandom = random.fork('relay');
        return () => relayRandom.next();
      })(),
      options,
      // Always: the relay runs as production's OutboxRelay, a PartitionedRelayNode (single-lease at 1).
      partitions: new SimPartitionPorts(context),
      ...(tenants
        ? {
            tenants: {
              databases: () => tenants.list(),
              ports: (relay, resolved) => {
                const hubRandom = random.fork('tenants');
                return new SimTenantPorts({
                  context: { ...context, random: random.fork('tenant-streams') },
                  appState: appState(),
                  tenants: resolved,
                  relay,
                  clock: proc.clock(),
                  random: () => hubRandom.next(),
                  logger: proc.loggers()('RelayTenants'),
                });
              },
            },
          }
        : {}),
      topicPrefix: SIM_TOPIC_PREFIX,
      countEffect: (kind, count) => this.history.countEffect(kind, count),
    });
    node.relay = relay;
    node.owner = owner;
    node.leaving = false; // a crash may have cut a graceful stop short
    relay.start().catch((error: unknown) => {
      this.history.logs.push({
        at: this.scheduler.now,
        node: proc.name,
        context: 'simulation',
        level: 'error',
        message: `start() rejected: ${error instanceof Error ? error.message : String(error)}`,
      });
    });
  }

  /** The live relay that leads now, if one does. */
  private leading(): SimNode | undefined {
    return this.nodes.find(
      (node) => node.process.isAlive && node.relay?.status().role === 'leader',
    );
  }

  /** Puts one fault of the plan into effect (window faults are read by the models directly). */
  private arm(fault: Fault): void {
    this.history.countFault(fault.kind);
    const node = (): SimNode | undefined => {
      if (fault.target === THE_LEADER) return this.leading();
      return this.nodes.length > 0 ? this.nodes[fault.target % this.nodes.length] : undefined;
    };
    const onLiveNode = (label: string, act: (target: SimNode) => void): void => {
      this.scheduler.at(fault.at, 'faults', label, () => {
        const target = node();
        if (!target?.process.isAlive) return;
        this.history.countEffect(fault.kind);
        act(target);
      });
    };
    switch (fault.kind) {
      case 'stepdown':
        this.scheduler.at(fault.at, 'db', 'stepdown', () => {
          this.history.countEffect('stepdown');
          const rolledBack = this.db.stepdown(fault.duration);
          if (rolledBack > 0) this.history.countEffect('rolled-back-event', rolledBack);
        });
        break;
      case 'crash':
        onLiveNode('crash', (target) => {
          target.restartDelayMs = fault.duration;
          target.process.crash('crash fault');
        });
        break;
      case 'crash-at-call':
        onLiveNode('arm crash-at-call', (target) => {
          target.restartDelayMs = fault.duration;
          const k = target.process.portCalls + 1 + (fault.param % 40);
          target.process.crashAtPortCall(
            k,
            fault.param % 2 === 1,
            fault.at + CRASH_AT_CALL_WINDOW_MS,
          );
        });
        break;
      case 'crash-in-timer':
        onLiveNode('arm crash-in-timer', (target) => {
          target.restartDelayMs = fault.duration;
          target.process.crashAtTimerFiring(
            Math.floor(fault.param / 2) + 1,
            fault.param % 2 === 1,
            fault.at + CRASH_AT_CALL_WINDOW_MS,
          );
        });
        break;
      case 'clock-drift':
        onLiveNode('clock drift', (target) => {
          target.process.setClockRate(1 + fault.param / 1e6);
          this.scheduler.at(fault.at + fault.duration, 'faults', 'clock drift ends', () =>
            target.process.setClockRate(1),
          );
        });
        break;
      case 'pause':
        onLiveNode('pause', (target) => target.process.pause(fault.at + fault.duration));
        break;
      case 'leave':
        onLiveNode('leave', (target) => this.leave(target, fault.duration, fault.param));
        break;
      case 'clock-skew':
        onLiveNode('clock step', (target) => target.process.stepClock(fault.param));
        break;
      case 'kafka-partitions-added': {
        const topics = this.schedule.world.topics;
        const topic = `${SIM_TOPIC_PREFIX}${topics[fault.target % topics.length].type}`;
        this.scheduler.at(fault.at, 'kafka', `${fault.param} partition(s) added to ${topic}`, () =>
          this.kafka.addPartitions(topic, fault.param),
        );
        break;
      }
      case 'tenant-added':
      case 'tenant-removed':
      case 'database-dropped':
        this.tenants?.arm(fault);
        break;
      case 'extra-relay':
        if (this.schedule.relays.skewsMs.length + this.joined >= 3) return;
        this.joined++;
        this.history.countEffect('extra-relay');
        this.addNode(fault.param, fault.at);
        break;
      default:
        break;
    }
  }

  /**
   * A graceful stop of one relay (a scale-down or a rolling deploy): `stop()`, then the
   * process exits and starts again after `restartMs`, with `partitions` when > 0.
   */
  private leave(node: SimNode, restartMs: number, partitions: number): void {
    const relay = node.relay;
    if (!relay || node.leaving) return;
    node.leaving = true;
    const incarnation = node.process.incarnation;
    this.history.processes.push({ at: this.scheduler.now, node: node.process.name, kind: 'stop' });
    void relay.stop().then(() => {
      node.leaving = false;
      if (node.stopped || node.process.incarnation !== incarnation || !node.process.isAlive) return;
      if (partitions > 0) node.partitions = partitions;
      node.restartDelayMs = restartMs;
      node.process.crash(GRACEFUL_EXIT);
    });
  }

  /** Stops every live relay (as an app shutdown would); reports stops that hang or throw. */
  private async stopAll(): Promise<string[]> {
    const problems: string[] = [];
    const live = this.nodes.filter((node) => node.relay && node.process.isAlive);
    let pending = live.length;
    for (const node of live) {
      node.stopped = true;
      const relay = node.relay as RelayUnderTest;
      relay.stop().then(
        () => pending--,
        (error: unknown) => {
          pending--;
          problems.push(`${node.process.name}: stop() threw ${String(error)}`);
        },
      );
    }
    const limit = this.scheduler.now + this.schedule.options.shutdownTimeoutMs + 10_000;
    await this.scheduler.run({ until: limit, done: () => pending === 0 });
    if (pending > 0) problems.push(`${pending} relay(s) did not finish stop() within ${limit} ms`);
    return problems;
  }
}

/** Bytes of an event on the wire, as the broker counts them. */
function wireBytes(doc: SimOutboxDoc): number {
  const message = toKafkaMessage(doc as never);
  return messageBytes({ ...message, partition: 0 });
}
