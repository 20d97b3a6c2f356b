import { Inject, Injectable } from '@nestjs/common';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_RELAY_OPTIONS, OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import type { ResolvedRelayOptions } from '../relay/relay.options';
import { mongoRelayStateReader } from '../relay/mongo/mongo-relay-state.reader';
import type { RelayStateReader } from '../relay/ports/relay-state.reader';
import { OutboxRelay } from '../relay/outbox.relay';
import { OutboxRelayMetrics } from '../relay/relay.metrics';
import { OutboxHealthCheckError } from './outbox-health-check.error';
import { HEALTH_DEFAULTS } from './outbox-health.report';
import type {
  OutboxHealthOptions,
  OutboxHealthReport,
  ScheduledHealth,
} from './outbox-health.report';
import { probeOplogWindow } from './oplog-window.probe';
import {
  checkpointReport,
  judgePartitions,
  lagProblem,
  msSince,
  oplogVerdict,
  seconds,
} from './partition-health';

/**
 * The outbox's health: this process's relay (leader or standby, stream following or recovering,
 * held destinations), the backlog (age of the oldest pending event against `maxLagMs`; a
 * scheduled event counts from its due time, not before), and
 * the saved stream position against the oplog window, so that a relay about to fall off the
 * oplog says so before it happens. The relay's stored state is read through the relay's
 * read-only `RelayStateReader`.
 *
 * With a stored layout of several partitions (`relay.partitions` > 1), it also reports every
 * partition (holder, lag, saved position), and an instance with a relay answers for the
 * partitions it holds only; what no instance can fix alone (partitions nobody holds, other
 * instances' partitions lagging) is listed in `degraded`, not failed (`judgePartitions`).
 *
 * With `@nestjs/terminus`: `() => outboxHealth.check('outbox')` in a `HealthCheckService.check`
 * list. Without it: `health()` (the full report) or `isHealthy()`.
 */
@Injectable()
export class OutboxHealthIndicator {
  constructor(
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    @Inject(OUTBOX_RELAY_OPTIONS) private readonly relayOptions: ResolvedRelayOptions | false,
    private readonly host: OutboxConnectionHost,
    private readonly relay: OutboxRelay,
    private readonly metrics: OutboxRelayMetrics,
  ) {}

  async isHealthy(options: OutboxHealthOptions = {}): Promise<boolean> {
    return (await this.health(options)).healthy;
  }

  /**
   * A terminus health indicator: resolves `{ [key]: { status: 'up', ...report } }`, or throws
   * an error terminus reports as `down` with the same details.
   */
  async check(
    key = 'outbox',
    options: OutboxHealthOptions = {},
  ): Promise<Record<string, Record<string, unknown> & { status: 'up' }>> {
    const { healthy, ...details } = await this.health(options);
    if (healthy) return { [key]: { status: 'up', ...details } };
    throw new OutboxHealthCheckError(details.problems.join(' '), {
      [key]: { status: 'down', ...details },
    });
  }

  async health(options: OutboxHealthOptions = {}): Promise<OutboxHealthReport> {
    const maxLagMs = options.maxLagMs ?? HEALTH_DEFAULTS.maxLagMs;
    const maxUse = options.maxOplogWindowUse ?? HEALTH_DEFAULTS.maxOplogWindowUse;
    const relayOptions = this.relayOptions === false ? undefined : this.relayOptions;
    const relayName = options.relayName ?? relayOptions?.name ?? 'default';
    const db = this.host.connection.db;
    if (!db) throw new Error('The Mongoose connection is not open; no health to report yet.');
    const stored = mongoRelayStateReader(db, this.options.collections);
    const problems: string[] = [];

    const hello = await db.command({ hello: 1 });
    const serverNow = hello.localTime instanceof Date ? hello.localTime : new Date();

    let relay: OutboxHealthReport['relay'];
    const status = relayOptions ? this.relay.status() : undefined;
    if (status) {
      relay = {
        role: status.role,
        stream: status.stream,
        ...(status.streamError ? { streamError: status.streamError } : {}),
        ...(status.brokerPausedUntil ? { brokerPausedUntil: status.brokerPausedUntil } : {}),
        ...(status.configurationError ? { configurationError: status.configurationError } : {}),
        heldDestinations: status.heldDestinations,
        inFlightEvents: status.inFlight.events,
      };
      if (status.role === 'stopped') problems.push('The relay of this instance is not running.');
      if (status.configurationError) {
        problems.push(`Publishing is paused by a ${status.configurationError}.`);
      }
    }

    const oldest = await stored.oldestPendingAt();
    const oldestPendingAgeMs = oldest ? msSince(oldest, serverNow) : undefined;
    const scheduled = await this.scheduledHealth(stored, serverNow, maxLagMs, problems);
    const window = await probeOplogWindow(this.host.connection.getClient(), serverNow);
    const oplog: OutboxHealthReport['oplog'] = { ...window, maxUse };

    const partitioned = await stored.partitionedRelay(relayName);
    const pendingCount =
      !partitioned && this.relay.isLeader ? this.metrics.pendingCount : undefined;
    let checkpoint: OutboxHealthReport['checkpoint'];
    let partitionsReport: Pick<OutboxHealthReport, 'partitions' | 'degraded'> = {};
    if (partitioned) {
      // Several partitions: this instance answers for the ones it holds (`judgePartitions`).
      const verdict = judgePartitions({
        stored: partitioned,
        serverNow,
        // The partitions this instance holds are its relay's (not another relay's, by name).
        relay:
          relayOptions && relayOptions.name === relayName
            ? { configured: relayOptions.partitions, partitions: status?.partitions }
            : undefined,
        maxLagMs,
        window,
        maxUse,
        oldestPendingAgeMs,
      });
      problems.push(...verdict.problems);
      if (verdict.used !== undefined) oplog.used = verdict.used;
      checkpoint = verdict.checkpoint;
      partitionsReport = { partitions: verdict.partitions, degraded: verdict.degraded };
    } else {
      if (oldestPendingAgeMs !== undefined && oldestPendingAgeMs > maxLagMs) {
        problems.push(lagProblem(oldestPendingAgeMs, maxLagMs));
      }
      checkpoint = checkpointReport(await stored.checkpoint(relayName), serverNow);
      const verdict = oplogVerdict(checkpoint, window, maxUse);
      if (verdict.used !== undefined) oplog.used = verdict.used;
      if (verdict.problem) problems.push(verdict.problem);
    }

    return {
      healthy: problems.length === 0,
      problems,
      ...(relay ? { relay } : {}),
      lag: {
        ...(oldestPendingAgeMs !== undefined ? { oldestPendingAgeMs } : {}),
        ...(pendingCount !== undefined ? { pendingCount } : {}),
        maxLagMs,
        scheduled,
      },
      checkpoint,
      oplog,
      ...partitionsReport,
    };
  }

  /** Scheduled events: a problem once the oldest due one waits longer than `maxLagMs`. */
  private async scheduledHealth(
    stored: RelayStateReader,
    serverNow: Date,
    maxLagMs: number,
    problems: string[],
  ): Promise<ScheduledHealth> {
    const stats = await stored.scheduledStats(serverNow);
    const overdue = stats.oldestOverdueAt ? msSince(stats.oldestOverdueAt, serverNow) : undefined;
    if (overdue !== undefined && overdue > maxLagMs) {
      problems.push(
        `The oldest due scheduled event has waited ${seconds(overdue)} since it was due (limit ${seconds(maxLagMs)}).`,
      );
    }
    return {
      count: stats.count,
      ...(stats.countCapped ? { countCapped: true } : {}),
      ...(stats.nextDueAt ? { nextDueAt: stats.nextDueAt } : {}),
      ...(overdue !== undefined ? { oldestOverdueAgeMs: overdue } : {}),
    };
  }
}
