import { outboxRelayStoreContract } from './outbox-relay.store.contract';
import { simOutboxStoreFixture } from './support/sim-ports';

describe('OutboxRelayStore contract: the simulated store (SimOutboxStore)', () => {
  outboxRelayStoreContract(() => Promise.resolve(simOutboxStoreFixture()));
});
