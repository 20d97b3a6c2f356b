import { kafkaSenderContract } from './kafka.sender.contract';
import { simKafkaSenderFixture } from './support/sim-ports';

describe('KafkaSender contract: the simulated sender (SimKafkaSender)', () => {
  kafkaSenderContract(() => Promise.resolve(simKafkaSenderFixture()));
});
