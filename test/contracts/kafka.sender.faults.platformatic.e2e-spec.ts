import { describeWith } from '../harness';
import { kafkaSenderFaultsContract } from './kafka.sender.faults.contract';
import { kafkaSenderFaultsFixture } from './support/kafka-faults-ports';
import { platformaticFaultClient, stopPlatformaticChild } from './support/platformatic-ports';

describeWith(
  ['kafka-faults'],
  'KafkaSender contract under faults: PlatformaticKafkaSender on the broker through the fault proxy',
  () => {
    afterAll(stopPlatformaticChild);
    kafkaSenderFaultsContract(() => kafkaSenderFaultsFixture(platformaticFaultClient));
  },
);
