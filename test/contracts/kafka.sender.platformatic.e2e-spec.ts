import { describeWith } from '../harness';
import { kafkaSenderContract } from './kafka.sender.contract';
import { platformaticSenderFixture, stopPlatformaticChild } from './support/platformatic-ports';

describeWith(['kafka'], 'KafkaSender contract: PlatformaticKafkaSender on the broker', () => {
  afterAll(stopPlatformaticChild);
  kafkaSenderContract(platformaticSenderFixture, {
    partitionRefused:
      'a single-node broker cannot be made to refuse one partition on demand (the simulated side shows it)',
    unauthorized: 'the test broker runs without ACLs (the simulated side shows it)',
    brokerDown: 'the shared broker is not stopped by these tests (the simulated side shows it)',
  });
});
