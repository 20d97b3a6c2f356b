import { relayPartitionsContract } from './relay-partitions.store.contract';
import { simPartitionsFixture } from './support/sim-ports';

describe('RelayPartitionPorts contract: the simulated ports (SimPartitionPorts)', () => {
  relayPartitionsContract(() => Promise.resolve(simPartitionsFixture()));
});
