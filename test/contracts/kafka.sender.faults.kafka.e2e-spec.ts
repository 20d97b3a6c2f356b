import { describeWith } from '../harness';
import { kafkaSenderFaultsContract } from './kafka.sender.faults.contract';
import { kafkajsFaultClient } from './support/kafka-ports';
import { kafkaSenderFaultsFixture } from './support/kafka-faults-ports';

describeWith(
  ['kafka-faults'],
  'KafkaSender contract under faults: KafkajsSender on the broker through the fault proxy',
  () => {
    kafkaSenderFaultsContract(() => kafkaSenderFaultsFixture(kafkajsFaultClient));
  },
);
