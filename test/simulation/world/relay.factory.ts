import { KafkaPublisher } from '../../../lib/publisher/kafka/kafka.publisher';
import { PartitionedRelayNode } from '../../../lib/relay/partitions/partitioned-relay.node';
import { RelayNode } from '../../../lib/relay/relay.node';
import { OutboxRelayMetrics } from '../../../lib/relay/relay.metrics';
import { resolveRelayOptions } from '../../../lib/relay/relay.options';
import type { ResolvedRelayOptions } from '../../../lib/relay/relay.options';
import type { RelayFactory, SimRelayPorts } from './relay-under-test';

/** The relay options of a schedule, resolved as the module would (validation included). */
export function simRelayOptions(ports: SimRelayPorts): ResolvedRelayOptions {
  const { options } = ports;
  return resolveRelayOptions({
    kafka: { brokers: ['127.0.0.1:9092'] },
    topicPrefix: ports.topicPrefix,
    batchSize: options.batchSize,
    maxBatchBytes: options.maxBatchBytes,
    maxInFlight: options.maxInFlight,
    maxInFlightBytes: options.maxInFlightBytes,
    maxAttempts: options.maxAttempts,
    backoff: options.backoff,
    sweepIntervalMs: options.sweepIntervalMs,
    sweepGraceMs: options.sweepGraceMs,
    checkpointEvery: options.checkpointEvery,
    lease: { enabled: true, ...options.lease },
    idleMs: options.idleMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs,
    partitions: options.partitions,
  });
}

/**
 * The relay under test: lib/'s `RelayNode` (`PartitionedRelayNode` in partitioned runs),
 * publishing through lib/'s `KafkaPublisher` over the simulated Kafka sender (so routing, partitioning, byte limits, splitting and error
 * classification run in the simulation too).
 */
export const realRelay: RelayFactory = (ports) => {
  const options = simRelayOptions(ports);
  const publisher = new KafkaPublisher(
    { brokers: ['127.0.0.1:9092'], topicPrefix: ports.topicPrefix },
    ports.sender,
    () => ports.clock.monotonic(),
  );
  observePublishCalls(publisher, options, ports.countEffect);
  const deps = {
    owner: ports.owner,
    outbox: ports.outbox,
    state: ports.state,
    changes: ports.changes,
    publisher,
    clock: ports.clock,
    loggers: ports.loggers,
    metrics: new OutboxRelayMetrics(),
    random: ports.random,
  };
  return ports.partitions
    ? new PartitionedRelayNode(options, { ...deps, partitions: ports.partitions })
    : new RelayNode(options, deps);
};

/**
 * Counts publish calls the byte bound filled (fewer than `batchSize` events, and the smallest
 * event seen would not have fitted under `maxBatchBytes`) and calls that `batchSize` filled. An
 * observer only: the call goes to the publisher unchanged.
 */
function observePublishCalls(
  publisher: KafkaPublisher,
  options: ResolvedRelayOptions,
  countEffect: SimRelayPorts['countEffect'],
): void {
  if (!countEffect) return;
  const publish = publisher.publish.bind(publisher);
  let smallest = Number.POSITIVE_INFINITY;
  publisher.publish = (events, context) => {
    let bytes = 0;
    for (const event of events) {
      const size = publisher.sizeOf(event);
      bytes += size;
      smallest = Math.min(smallest, size);
    }
    if (events.length >= options.batchSize) countEffect('publish call filled by batchSize');
    else if (events.length > 0 && bytes + smallest > options.maxBatchBytes)
      countEffect('publish call full by maxBatchBytes');
    return publish(events, context);
  };
}
