import { Controller, type INestApplication } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload, Transport } from '@nestjs/microservices';
import { getConnectionToken, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection } from 'mongoose';
import { IdempotentHandler, OutboxModule } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  consumerMongoUri,
  dropDatabase,
  eventMessage,
  kafkaConsumerOptions,
  LedgerService,
  send,
  sleep,
  testLogLevels,
  waitFor,
} from './consumer-app.fixtures';

const topic = uniqueName('early');
const id = (ctx: KafkaContext) => String(ctx.getMessage().headers?.ce_id ?? '');

@Controller()
class EarlyHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(topic)
  @IdempotentHandler({ consumer: 'early' })
  async onEvent(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('early', id(ctx), p.n);
  }
}

/**
 * Issue 11, defect 1 (module not initialized): a hybrid app that starts its microservices before
 * `init()` receives messages while `OutboxModule` is not initialized. The partition is paused and
 * retried with backoff, nothing is dead-lettered, and once the module is up the messages of the
 * partition are applied, each once.
 */
describeWith(
  ['mongodb', 'kafka'],
  'messages that arrive before OutboxModule is initialized',
  () => {
    const db = uniqueName('early');
    let app: INestApplication | undefined;

    beforeAll(() => createTopics([topic], 1), 60000);
    afterAll(async () => {
      await app?.close();
      await dropDatabase(db);
    });

    it('wait for the module, then are applied in order', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          MongooseModule.forRoot(consumerMongoUri(db)),
          OutboxModule.forRoot({
            relay: false,
            consumer: { retryBackoff: { initialMs: 200, maxMs: 1000 } },
          }),
        ],
        controllers: [EarlyHandlers],
        providers: [LedgerService],
      }).compile();
      app = moduleRef.createNestApplication({ logger: testLogLevels() });
      app.connectMicroservice({
        transport: Transport.KAFKA,
        options: kafkaConsumerOptions(uniqueName('early-group')),
      });
      await app.startAllMicroservices();
      await send(topic, [eventMessage('m-1', { n: 1 }), eventMessage('m-2', { n: 2 })]);
      await sleep(3000);

      const connection = app.get<Connection>(getConnectionToken());
      const ledger = connection.collection('ledger');
      expect(await ledger.countDocuments({ consumer: 'early' })).toBe(0);

      await app.init();
      await waitFor(
        async () => (await ledger.countDocuments({ consumer: 'early', eventId: 'm-2' })) === 1,
        30_000,
        'm-2 applied',
      );
      const rows = await ledger.find({ consumer: 'early' }).toArray();
      expect(rows.map((r) => r.eventId)).toEqual(['m-1', 'm-2']);
      expect(await connection.collection('outbox_consumer_dead_letters').countDocuments()).toBe(0);
    }, 90000);
  },
);
