import { Controller, INestMicroservice, Module } from '@nestjs/common';
import {
  ClientKafka,
  ClientsModule,
  EventPattern,
  Payload,
  Transport,
  Ctx,
  KafkaContext,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import {
  createTopics,
  describeWith,
  readTopic,
  testKafka,
  testServers,
  uniqueName,
} from '../harness';

/** What the library relies on from Kafka, proved against the broker of this run. */
describeWith(['kafka'], 'Kafka substrate', () => {
  it('kafkajs: a produced message comes back with its key, headers and value', async () => {
    const topic = uniqueName('substrate');
    await createTopics([topic], 3);
    const producer = testKafka().producer();
    await producer.connect();
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            key: 'order-1',
            value: '{"total":42}',
            headers: { ce_id: 'e-1', ce_type: 'OrderCreated' },
          },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    const [record] = await readTopic(topic, { count: 1 });
    expect(record).toMatchObject({
      key: 'order-1',
      value: '{"total":42}',
      headers: { ce_id: 'e-1', ce_type: 'OrderCreated' },
    });
  });

  describe('@nestjs/microservices Kafka transport', () => {
    const topic = uniqueName('nest-substrate');
    const received: Array<{ data: unknown; key: string | undefined; ceId: string | undefined }> =
      [];
    let resolveReceived: () => void;
    const arrived = new Promise<void>((r) => (resolveReceived = r));

    @Controller()
    class Listener {
      @EventPattern(topic)
      handle(@Payload() data: unknown, @Ctx() ctx: KafkaContext) {
        const message = ctx.getMessage();
        received.push({
          data,
          key: message.key?.toString(),
          ceId: message.headers?.ce_id?.toString(),
        });
        resolveReceived();
      }
    }

    @Module({
      imports: [
        ClientsModule.register([
          {
            name: 'KAFKA',
            transport: Transport.KAFKA,
            options: {
              client: { clientId: 'substrate-client', brokers: testServers().kafkaBrokers },
              producerOnlyMode: true,
            },
          },
        ]),
      ],
      controllers: [Listener],
    })
    class ListenerModule {}

    let app: INestMicroservice;
    let client: ClientKafka;

    beforeAll(async () => {
      await createTopics([topic], 1);
      const moduleRef = await Test.createTestingModule({ imports: [ListenerModule] }).compile();
      app = moduleRef.createNestMicroservice({
        transport: Transport.KAFKA,
        options: {
          client: { clientId: 'substrate-server', brokers: testServers().kafkaBrokers },
          consumer: { groupId: uniqueName('substrate-group') },
          subscribe: { fromBeginning: true },
        },
      });
      app.useLogger(false);
      await app.listen();
      client = app.get('KAFKA');
      await client.connect();
    });
    afterAll(async () => {
      await client?.close();
      await app?.close();
    });

    it('ClientKafka.emit reaches an @EventPattern handler with key, headers and parsed value', async () => {
      await lastValueFrom(
        client.emit(topic, { key: 'order-7', value: { total: 7 }, headers: { ce_id: 'e-7' } }),
      );
      await Promise.race([
        arrived,
        new Promise((_, rej) => setTimeout(() => rej(new Error('no message')), 30000)),
      ]);
      expect(received).toEqual([{ data: { total: 7 }, key: 'order-7', ceId: 'e-7' }]);
    });
  });
});
