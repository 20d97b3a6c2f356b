import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import { SimRandom } from '../../simulation/core/sim.random';
import { SimScheduler } from '../../simulation/core/sim.scheduler';
import { SimTrace } from '../../simulation/core/sim.trace';
import { SimChangeStreams } from '../../simulation/mongo/sim-change-streams';
import { copyDoc, SimDatabase } from '../../simulation/mongo/sim-database';
import type { SimOutboxDoc } from '../../simulation/mongo/sim-database';
import { SimMongoConnection } from '../../simulation/mongo/sim-mongo.connection';
import { SimProcess } from '../../simulation/process/sim-process';
import { ActiveFaults } from '../../simulation/schedule/active-faults';
import { SimHistory } from '../../simulation/world/sim.history';

/**
 * The simulated MongoDB the relay's simulated ports run on, without faults: one database, its
 * change streams, and one relay process's connection. Inserts are majority-committed when
 * `insert` resolves unless the majority lag says otherwise.
 */
export class SimMongoWorld {
  readonly scheduler = new SimScheduler(new SimTrace());
  readonly history = new SimHistory();
  readonly faults = new ActiveFaults([]);
  readonly random = new SimRandom(20261201);
  readonly db: SimDatabase;
  readonly streams: SimChangeStreams;
  readonly connection: SimMongoConnection;
  readonly process: SimProcess;
  private windowMs = 3_600_000;
  private lagMs = 0;

  constructor(readonly owner = 'contract-relay') {
    this.db = new SimDatabase(this.scheduler, this.history, {
      // Documents are stored as inserted (`sequence` too), as MongoDB does.
      aggregateSequence: false,
      oplogWindowMs: () => this.windowMs,
      majorityLagMs: () => this.lagMs,
      topicOf: (type) => `contract.${type}`,
      sizeOf: () => 100,
      isOversize: () => false,
      isPoison: () => false,
    });
    this.streams = new SimChangeStreams(
      this.scheduler,
      this.db,
      this.history,
      this.random.fork('streams'),
    );
    this.process = new SimProcess('contract', this.scheduler, this.history, new SimTrace(), 0);
    this.process.boot(0);
    this.connection = new SimMongoConnection(
      this.scheduler,
      this.db,
      this.history,
      this.faults,
      this.process,
      this.random.fork('db'),
      1,
      owner,
    );
  }

  /**
   * Commits `events` in one transaction each (copies: the server's documents are its own), as
   * stored: raw inserts, as the Mongo fixture makes them (the write side's order rule is not
   * applied: `exempt`), in the tenant database `database` if given.
   */
  async insert(
    events: readonly OutboxEventRecord[],
    options: { majorityLagMs?: number; database?: string } = {},
  ) {
    this.lagMs = options.majorityLagMs ?? 0;
    const raw = { exempt: new Set([0]), database: options.database };
    for (const event of events) this.db.commit([copyDoc(event as unknown as SimOutboxDoc)], raw);
    this.lagMs = 0;
    if (options.majorityLagMs === undefined) await this.runUntil(this.scheduler.now);
  }

  /** Runs the scheduler up to virtual time `time`. */
  async runUntil(time: number): Promise<void> {
    await this.scheduler.run({ until: time });
  }

  /** The oplog keeps only what is newer than `ms` from now on. */
  shrinkOplogWindow(ms: number): void {
    this.windowMs = ms;
  }
}
