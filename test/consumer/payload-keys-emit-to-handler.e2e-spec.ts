import { Controller, Injectable, Logger, type INestApplicationContext } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { getConnectionToken, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection } from 'mongoose';
import {
  IdempotentHandler,
  InjectOutboxEmitter,
  OutboxEmitter,
  OutboxModule,
  Transactional,
} from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import { startRelayApp, testRelayOptions, type RelayTestApp } from '../relay/support/relay-app';
import {
  consumerMongoUri,
  dropDatabase,
  eventMessage,
  send,
  startConsumerApp,
  testLogLevels,
  waitFor,
  type ConsumerApp,
} from './consumer-app.fixtures';

const prefix = `${uniqueName('keys')}.`;
const noteTopic = `${prefix}Note`;
const rawTopic = uniqueName('raw-proto');
const received: Array<{ eventId: string; payload: Record<string, unknown> }> = [];

/** A service as users write it, emitting a payload with keys named like Object's own. */
@Injectable()
class Notes {
  constructor(@InjectOutboxEmitter('writer') private readonly emitter: OutboxEmitter) {}

  @Transactional({ connectionName: 'writer' })
  async take(id: string): Promise<string> {
    return this.emitter.emit({
      eventType: 'NoteTaken',
      aggregateType: 'Note',
      aggregateId: id,
      payload: { id, constructor: 'x', nested: { prototype: 1 } },
    });
  }
}

@Controller()
class NoteHandlers {
  @EventPattern('NoteTaken')
  @IdempotentHandler({ consumer: 'notes' })
  onNote(@Payload() payload: Record<string, unknown>, @Ctx() ctx: KafkaContext) {
    received.push({ eventId: String(ctx.getMessage().headers?.ce_id), payload });
  }

  @EventPattern(rawTopic)
  @IdempotentHandler({ consumer: 'raw' })
  onRaw(@Payload() payload: Record<string, unknown>, @Ctx() ctx: KafkaContext) {
    received.push({ eventId: String(ctx.getMessage().headers?.ce_id), payload });
  }
}

/**
 * One payload rule on both sides (issue 11, defect 3): keys named `constructor` or `prototype`
 * are data, accepted when emitted and applied by the handler; `__proto__` is refused on both
 * sides, and a raw message carrying it is dead-lettered without polluting anything.
 */
describeWith(['mongodb', 'kafka'], 'payload keys: one rule from emit to handler', () => {
  const db = uniqueName('keys');
  let writer: INestApplicationContext;
  let consumer: ConsumerApp;
  let relay: RelayTestApp;

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    await createTopics([noteTopic, rawTopic], 1);
    const moduleRef = await Test.createTestingModule({
      imports: [
        // Its own connection name: the consumer app of this test runs in the same process.
        MongooseModule.forRoot(consumerMongoUri(db), { connectionName: 'writer' }),
        OutboxModule.forRoot({ connectionName: 'writer', relay: false }),
      ],
      providers: [Notes],
    }).compile();
    writer = moduleRef.createNestApplication({ logger: testLogLevels() });
    await writer.init();
    relay = await startRelayApp(db, testRelayOptions(prefix));
    consumer = await startConsumerApp(
      db,
      [NoteHandlers],
      {},
      { outboxServerTopics: [noteTopic, rawTopic] },
    );
  }, 60000);

  afterAll(async () => {
    await consumer?.close();
    await relay?.close();
    await writer?.close();
    await dropDatabase(db);
  });

  it('an event { constructor, nested: { prototype } } emitted by a service is applied as data', async () => {
    const eventId = await writer.get(Notes).take('n-1');
    await waitFor(() => received.some((r) => r.eventId === eventId), 60_000, 'the note applied');
    const { payload } = received.find((r) => r.eventId === eventId)!;
    expect(payload.constructor).toBe('x');
    expect(payload.nested).toEqual({ prototype: 1 });
    expect(Object.getPrototypeOf(payload)).toBeNull();
    const stored = await writer
      .get<Connection>(getConnectionToken('writer'))
      .collection('outbox')
      .findOne({ eventId });
    expect(stored!.payload).toMatchObject({ constructor: 'x', nested: { prototype: 1 } });
  }, 90000);

  it('raw messages with "__proto__" are dead-lettered and pollute nothing', async () => {
    await send(rawTopic, [
      eventMessage('r-1', { n: 1 }, { value: '{"n":1,"__proto__":{"polluted":true}}' }),
      eventMessage('r-2', { n: 2 }, { value: '{"n":2,"a":[{"__proto__":{"polluted":true}}]}' }),
      eventMessage(
        'r-3',
        { n: 3 },
        { value: '{"n":3,"constructor":{"prototype":{"polluted":true}}}' },
      ),
      eventMessage('r-4', { n: 4 }),
    ]);
    await waitFor(() => received.some((r) => r.eventId === 'r-4'), 60_000, 'r-4 applied');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(received.filter((r) => r.eventId.startsWith('r-')).map((r) => r.eventId)).toEqual([
      'r-3',
      'r-4',
    ]);
    const dead = await consumer.connection
      .collection('outbox_consumer_dead_letters')
      .find({ consumer: 'raw', status: 'dead' })
      .sort({ offset: 1 })
      .toArray();
    expect(dead.map((d) => [d.eventId, d.reason])).toEqual([
      ['r-1', 'forbidden-key'],
      ['r-2', 'forbidden-key'],
    ]);
  }, 90000);
});
