import { Logger } from '@nestjs/common';
import { describeWith } from '../harness';
import { stopPlatformaticChild } from '../contracts/support/platformatic-ports';
import { faultyDrainCases } from './support/faulty-broker';

describeWith(
  ['kafka-faults'],
  'relay core + KafkaPublisher (@platformatic/kafka) draining a backlog through a faulty broker (fault proxy, seeded; outbox in memory)',
  () => {
    beforeAll(() => Logger.overrideLogger(['error']));
    afterAll(stopPlatformaticChild);
    faultyDrainCases('platformatic');
  },
);
