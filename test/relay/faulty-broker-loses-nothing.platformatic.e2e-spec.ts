import { Logger } from '@nestjs/common';
import { describeWith } from '../harness';
import { stopPlatformaticChild } from '../contracts/support/platformatic-ports';
import { checkFaultyDrain, drainThroughFaults, faultSeed } from './support/faulty-broker';

describeWith(
  ['kafka-faults'],
  'relay core + KafkaPublisher (@platformatic/kafka) draining a backlog through a faulty broker (fault proxy, seeded; outbox in memory)',
  () => {
    beforeAll(() => Logger.overrideLogger(['error']));
    afterAll(stopPlatformaticChild);

    for (const idempotent of [false, true]) {
      it(`idempotent ${idempotent}: every event in Kafka, none marked published without being there, per-aggregate order kept`, async () => {
        const seed = faultSeed();
        const drain = await drainThroughFaults({
          client: 'platformatic',
          idempotent,
          seed,
          events: 600,
          aggregates: 30,
          drainMs: 30_000,
        });
        console.log(
          `[faulty-broker] platformatic idempotent=${idempotent} seed=${seed} events=${drain.events} records=${drain.records.length} faults fired=${drain.faultsFired} produce requests=${drain.proxy.requests.Produce ?? 0} refused connections=${drain.proxy.refused}`,
        );
        const { duplicates } = checkFaultyDrain(drain);
        console.log(
          `[faulty-broker] platformatic idempotent=${idempotent} seed=${seed} duplicates=${duplicates}`,
        );
        expect(drain.faultsFired).toBeGreaterThan(0);
      }, 80_000);
    }
  },
);
