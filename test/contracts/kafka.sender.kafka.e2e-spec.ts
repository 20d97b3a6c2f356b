import { describeWith } from '../harness';
import { kafkaSenderContract } from './kafka.sender.contract';
import { kafkajsSenderFixture } from './support/kafka-ports';

describeWith(['kafka'], 'KafkaSender contract: KafkajsSender on the broker', () => {
  kafkaSenderContract(kafkajsSenderFixture, {
    partitionRefused:
      'a single-node broker cannot be made to refuse one partition on demand (the simulated side shows it)',
    unauthorized: 'the test broker runs without ACLs (the simulated side shows it)',
    brokerDown:
      'the shared broker is not stopped by these tests (the simulated side shows it; test/publisher/broker-outage covers kafkajs)',
  });
});
