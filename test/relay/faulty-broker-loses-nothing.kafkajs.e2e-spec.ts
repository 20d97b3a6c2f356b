import { Logger } from '@nestjs/common';
import { describeWith } from '../harness';
import { faultyDrainCases } from './support/faulty-broker';

describeWith(
  ['kafka-faults'],
  'relay core + KafkaPublisher (kafkajs) draining a backlog through a faulty broker (fault proxy, seeded; outbox in memory)',
  () => {
    beforeAll(() => Logger.overrideLogger(['error']));
    faultyDrainCases('kafkajs');
  },
);
