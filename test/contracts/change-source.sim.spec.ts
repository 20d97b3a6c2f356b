import { changeSourceContract } from './change-source.contract';
import { simChangeSourceFixture } from './support/sim-ports';

describe('ChangeSource contract: the simulated stream (SimChangeSource)', () => {
  changeSourceContract(() => Promise.resolve(simChangeSourceFixture()), {
    invalidate: 'the simulated outbox collection is never dropped',
  });
});
