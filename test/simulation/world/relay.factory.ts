import { KafkaPublisher } from '../../../lib/publisher/kafka/kafka.publisher';
import { PartitionedRelayNode } from '../../../lib/relay/partitions/partitioned-relay.node';
import { PublisherConnection } from '../../../lib/relay/publisher-connection';
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
  if (ports.partitions) {
    return new PartitionedRelayNode(options, { ...deps, partitions: ports.partitions });
  }
  // A RelayNode alone does not own the publisher's connection (PartitionedRelayNode does).
  const node = new RelayNode(options, deps);
  const connection = new PublisherConnection(publisher, ports.loggers('RelayLease'));
  return {
    start: () => {
      if (!node.isRunning) connection.open();
      return node.start();
    },
    stop: async () => {
      await node.stop();
      await connection.close();
    },
    status: () => node.status(),
  };
};
