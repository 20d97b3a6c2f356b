import { SimRandom } from '../core/sim.random';
import { SimScheduler } from '../core/sim.scheduler';
import { SimTrace } from '../core/sim.trace';
import { SimProcess } from '../process/sim-process';
import { ActiveFaults } from '../schedule/active-faults';
import type { Fault } from '../schedule/schedule.types';
import { SimHistory } from '../world/sim.history';
import { SimKafkaCluster } from './sim-kafka.cluster';
import { SimKafkaSender } from './sim-kafka.sender';

export interface SimKafkaRigOptions {
  /** Topic names, in type-index order, each with 2 partitions. */
  topics: readonly string[];
  faults?: Fault[];
  seed: number;
  messageMaxBytes: number;
  /** The process the sender belongs to. */
  processName: string;
  idempotent?: boolean;
}

/**
 * One simulated sender on its own cluster, outside a `SimWorld`: the sender's specs and the
 * sender contract drive it step by step (2 ms latency, kafkajs' retries at 2 with 100 ms between,
 * the lease always held).
 */
export function simKafkaRig(options: SimKafkaRigOptions) {
  const scheduler = new SimScheduler(new SimTrace());
  const history = new SimHistory();
  const faults = new ActiveFaults(options.faults ?? []);
  const random = new SimRandom(options.seed);
  const cluster = new SimKafkaCluster(
    scheduler,
    history,
    faults,
    random.fork('cluster'),
    { messageMaxBytes: options.messageMaxBytes, requestMaxBytes: 1_000_000 },
    options.topics.map((name, typeIndex) => ({ name, typeIndex, partitions: 2 })),
  );
  const process = new SimProcess(options.processName, scheduler, history, new SimTrace(), 0);
  process.boot(0);
  const sender = new SimKafkaSender(
    scheduler,
    cluster,
    history,
    faults,
    process,
    random.fork('sender'),
    {
      latencyMs: 2,
      retries: 2,
      retryDelayMs: 100,
      holdsLease: () => true,
      idempotent: options.idempotent,
    },
  );
  return { scheduler, history, cluster, sender };
}
