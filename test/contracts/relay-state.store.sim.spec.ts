import { relayStateStoreContract } from './relay-state.store.contract';
import { simStateStoreFixture } from './support/sim-ports';

describe('RelayStateStore contract: the simulated store (SimStateStore)', () => {
  relayStateStoreContract(() => Promise.resolve(simStateStoreFixture()));
});
