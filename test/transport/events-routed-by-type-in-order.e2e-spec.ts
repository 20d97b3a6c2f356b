import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { OutboxKafkaServer } from '../../lib';
import { createTopics, describeWith, testKafka, testServers, uniqueName } from '../harness';

/**
 * All events of an aggregate share one topic (and so one partition, in order); OutboxKafkaServer
 * still dispatches them to handlers by event type.
 */
describeWith(['kafka'], 'OutboxKafkaServer', () => {
  const topic = uniqueName('Order');
  const seen: string[] = [];
  let done: () => void;
  const allSeen = new Promise<void>((resolve) => (done = resolve));
  const record = (entry: string) => {
    seen.push(entry);
    if (seen.length === 4) done();
  };

  @Controller()
  class OrderEvents {
    @EventPattern('OrderCreated')
    created(@Payload() data: { n: number }, @Ctx() ctx: KafkaContext) {
      record(`created:${ctx.getMessage().key?.toString()}:${data.n}`);
    }

    @EventPattern('OrderCancelled')
    cancelled(@Payload() data: { n: number }, @Ctx() ctx: KafkaContext) {
      record(`cancelled:${ctx.getMessage().key?.toString()}:${data.n}`);
    }
  }

  @Module({ controllers: [OrderEvents] })
  class ConsumerModule {}

  let app: INestMicroservice;

  beforeAll(async () => {
    await createTopics([topic], 3);
    const moduleRef = await Test.createTestingModule({ imports: [ConsumerModule] }).compile();
    app = moduleRef.createNestMicroservice({
      strategy: new OutboxKafkaServer({
        client: { clientId: 'routing-test', brokers: testServers().kafkaBrokers },
        consumer: { groupId: uniqueName('routing') },
        subscribe: { fromBeginning: true },
        topics: [topic],
      }),
    });
    app.useLogger(false);
    await app.listen();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('dispatches by ce_type, in partition order, and skips event types nobody handles', async () => {
    const producer = testKafka().producer();
    await producer.connect();
    const msg = (key: string, type: string | undefined, n: number) => ({
      key,
      value: JSON.stringify({ n }),
      headers: type ? { ce_type: type } : {},
    });
    await producer.send({
      topic,
      acks: -1,
      messages: [
        msg('o-1', 'OrderCreated', 1),
        msg('o-1', 'OrderShipped', 2),
        msg('o-1', undefined, 3),
        msg('o-1', 'OrderCancelled', 4),
        msg('o-2', 'OrderCreated', 5),
        msg('o-2', 'OrderCancelled', 6),
      ],
    });
    await producer.disconnect();
    await Promise.race([
      allSeen,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`only saw ${seen}`)), 30000)),
    ]);
    expect(seen.filter((s) => s.includes(':o-1:'))).toEqual(['created:o-1:1', 'cancelled:o-1:4']);
    expect(seen.filter((s) => s.includes(':o-2:'))).toEqual(['created:o-2:5', 'cancelled:o-2:6']);
  });

  it('refuses to start without topics', () => {
    expect(() => new OutboxKafkaServer({ topics: [] } as never)).toThrow(/needs "topics"/);
  });
});
