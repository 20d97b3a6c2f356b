import type { OutboxConnectionHost } from '../../../lib/common/outbox-connection.host';
import type { ResolvedOutboxOptions } from '../../../lib/options/resolved-options';
import { resolveOutboxOptions } from '../../../lib/options/outbox-options.validator';
import type { OutboxPublisher } from '../../../lib/publisher/outbox-publisher.interface';
import { OutboxRelay } from '../../../lib/relay/outbox.relay';
import type { OutboxRelayPorts } from '../../../lib/relay/outbox.relay';
import { OutboxRelayMetrics } from '../../../lib/relay/relay.metrics';
import type { ResolvedRelayOptions } from '../../../lib/relay/relay.options';
import { createOutboxPublisher } from '../../../lib/relay/relay.providers';
import type { RelayScheduling } from '../../../lib/relay/relay.scheduling';
import { tenantTermsOver } from '../../../lib/relay/tenants/tenants.wiring';
import type { RelayFactory, SimRelayPorts } from './relay-under-test';

/**
 * The module's options for a schedule, resolved as `OutboxModule` resolves them
 * (`resolveOutboxOptions`, which validates the relay's with `resolveRelayOptions`). No index
 * creation: the simulated server has none to create.
 */
export function simOutboxOptions(ports: SimRelayPorts): ResolvedOutboxOptions {
  const { options } = ports;
  return resolveOutboxOptions({
    createIndexes: false,
    relay: {
      kafka: {
        brokers: ['127.0.0.1:9092'],
        ...(options.idempotent ? { idempotent: true } : {}),
      },
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
    },
    ...(ports.tenants ? { tenants: { databases: ports.tenants.databases } } : {}),
  });
}

/**
 * lib/'s `OutboxRelay` (the class the Nest module starts and stops) with the simulated ports in
 * place of the MongoDB adapters: its `wirePorts` seam is the only thing replaced. So the
 * simulation runs what production runs: a `PartitionedRelayNode` (a single-lease one when
 * `partitions` is 1), the module's option resolution, and the publisher `createOutboxPublisher`
 * makes (lib/'s `KafkaPublisher`, over the simulated Kafka sender and the process's clock).
 */
class SimOutboxRelay extends OutboxRelay {
  constructor(
    options: ResolvedOutboxOptions,
    publisher: OutboxPublisher,
    private readonly ports: OutboxRelayPorts,
  ) {
    // The connection host and the scheduling are used only by the MongoDB `wirePorts`.
    super(
      options,
      options.relay,
      {} as OutboxConnectionHost,
      new OutboxRelayMetrics(),
      {} as RelayScheduling,
      publisher,
    );
  }

  protected override wirePorts(): Promise<OutboxRelayPorts> {
    return Promise.resolve(this.ports);
  }
}

/** The relay under test: lib/'s `OutboxRelay` over the simulated ports (see `SimOutboxRelay`). */
export const realRelay: RelayFactory = (ports) => {
  const options = simOutboxOptions(ports);
  const relay = options.relay as ResolvedRelayOptions;
  const publisher = createOutboxPublisher(relay, {
    sender: ports.sender,
    now: () => ports.clock.monotonic(),
  }) as OutboxPublisher;
  observePublishCalls(publisher, relay, ports.countEffect);
  if (!ports.partitions) throw new Error('OutboxRelay needs the partition ports');
  // With the `tenants` option, as `OutboxRelay.wirePorts` wires it (`tenantsTerms`), over the
  // simulated tenant ports.
  const tenants =
    ports.tenants && options.tenants
      ? tenantTermsOver(ports.tenants.ports(relay, options.tenants))
      : {};
  return new SimOutboxRelay(options, publisher, {
    ...tenants,
    owner: ports.owner,
    outbox: ports.outbox,
    state: ports.state,
    changes: ports.changes,
    clock: ports.clock,
    loggers: ports.loggers,
    random: ports.random,
    partitions: ports.partitions,
  });
};

/**
 * Counts publish calls the byte bound filled (fewer than `batchSize` events, and the smallest
 * event seen would not have fitted under `maxBatchBytes`) and calls that `batchSize` filled. An
 * observer only: the call goes to the publisher unchanged.
 */
function observePublishCalls(
  publisher: OutboxPublisher,
  options: ResolvedRelayOptions,
  countEffect: SimRelayPorts['countEffect'],
): void {
  const sizeOf = publisher.sizeOf?.bind(publisher);
  if (!countEffect || !sizeOf) return;
  const publish = publisher.publish.bind(publisher);
  let smallest = Number.POSITIVE_INFINITY;
  publisher.publish = (events, context) => {
    let bytes = 0;
    for (const event of events) {
      const size = sizeOf(event);
      bytes += size;
      smallest = Math.min(smallest, size);
    }
    if (events.length >= options.batchSize) countEffect('publish call filled by batchSize');
    else if (events.length > 0 && bytes + smallest > options.maxBatchBytes)
      countEffect('publish call full by maxBatchBytes');
    return publish(events, context);
  };
}
