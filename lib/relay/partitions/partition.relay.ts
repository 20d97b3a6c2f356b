import type { RelayLogger, RelayLoggerFactory } from '../ports/relay-logger';
import type { PartitionScope, RelayLayout } from '../ports/relay-partitions.store';
import type { RelayNodeDeps } from '../relay-node.deps';
import type { OutboxRelayMetrics } from '../relay.metrics';
import { RelayNode } from '../relay.node';
import type { ResolvedRelayOptions } from '../relay.options';
import type { SharedInFlight } from './shared-in-flight';

/** What one partition's relay shares with the instance's others. */
export interface PartitionRelayContext {
  options: ResolvedRelayOptions;
  base: RelayNodeDeps;
  budget: SharedInFlight;
  metrics: OutboxRelayMetrics;
}

/**
 * The relay of one partition: an ordinary `RelayNode` (lease, watchdog, `RelayTerm`) over the
 * partition's scope (slot-filtered reads and stream, its own lease and checkpoint), with a
 * share of the instance's in-flight budget, timers and logs named after the partition.
 * Started to take the partition, stopped to hand it over (graceful: the term ends, the
 * checkpoint is saved, the lease released; left to expire when publishes were abandoned).
 */
export class PartitionRelay {
  readonly node: RelayNode;
  private stopping?: Promise<void>;
  private started = false;

  constructor(
    readonly layout: RelayLayout,
    readonly partition: number,
    scope: PartitionScope,
    context: PartitionRelayContext,
  ) {
    const { options, base, budget, metrics } = context;
    const label = `partition ${partition}/${layout.partitions}`;
    this.node = new RelayNode(
      { ...options, name: `${options.name}.p${partition}of${layout.partitions}` },
      {
        ...base,
        ...scope, // its outbox, stream and state in place of the instance's
        partition: { layout, partition },
        loggers: labelled(base.loggers, label),
        metrics,
        budget: () => budget.share(),
        keepLeaseAfterAbandon: true,
      },
    );
  }

  get isLeader(): boolean {
    return this.node.isLeader;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Whether its first lease attempt is over (before: neither holding nor lost). */
  get hasStarted(): boolean {
    return this.started;
  }

  async start(): Promise<void> {
    await this.node.start();
    this.started = true;
  }

  /** Never throws; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.node.stop();
    return this.stopping;
  }
}

/** The same loggers, each message prefixed with `label` (a partition, a tenant database). */
export function labelled(loggers: RelayLoggerFactory, label: string): RelayLoggerFactory {
  return (context) => {
    const inner: RelayLogger = loggers(context);
    const say = (level: keyof RelayLogger) => (message: string) =>
      inner[level](`[${label}] ${message}`);
    return { log: say('log'), warn: say('warn'), error: say('error'), debug: say('debug') };
  };
}
