import { kafkaSenderContract } from './kafka.sender.contract';
import { simKafkaSenderFixture } from './support/sim-ports';

describe('KafkaSender contract: the simulated sender (SimKafkaSender)', () => {
  kafkaSenderContract(() => Promise.resolve(simKafkaSenderFixture()), {
    unreachable:
      'the simulated cluster has no addresses to get wrong (its broker outage is the brokerDown case)',
  });
});

describe('KafkaSender contract: the simulated sender, idempotent (producer ids and sequence numbers)', () => {
  kafkaSenderContract(() => Promise.resolve(simKafkaSenderFixture({ idempotent: true })), {
    unreachable:
      'the simulated cluster has no addresses to get wrong (its broker outage is the brokerDown case)',
  });
});
