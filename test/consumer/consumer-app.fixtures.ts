import {
  Injectable,
  type ExceptionFilter,
  type INestMicroservice,
  type Provider,
  type Type,
} from '@nestjs/common';
import { Transport, type KafkaOptions } from '@nestjs/microservices';
import { getConnectionToken, InjectConnection, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection } from 'mongoose';
import { Schema } from 'mongoose';
import {
  OutboxKafkaServer,
  OutboxModule,
  Transactional,
  type ConsumerOptions,
  type OutboxModuleOptions,
} from '../../lib';
import { mongoUriFor, testKafka, testServers, uniqueName } from '../harness';

/** What handlers write: one document per application of an event (no unique index on purpose). */
export const LedgerSchema = new Schema(
  { consumer: String, eventId: String, n: Number },
  { versionKey: false, collection: 'ledger' },
);

/** A service called from handlers: its @Transactional method joins the handler's transaction. */
@Injectable()
export class LedgerService {
  constructor(@InjectConnection() private readonly connection: Connection) {}

  private get ledger() {
    return this.connection.models.Ledger ?? this.connection.model('Ledger', LedgerSchema);
  }

  @Transactional()
  async record(consumer: string, eventId: string, n: number): Promise<void> {
    await this.ledger.create([{ consumer, eventId, n }]);
  }
}

export interface ConsumerApp {
  app: INestMicroservice;
  connection: Connection;
  groupId: string;
  close(): Promise<void>;
}

export interface ConsumerAppExtras {
  /** `OutboxKafkaServer` on these topics instead of Nest's `Transport.KAFKA`. */
  outboxServerTopics?: string[];
  /** `app.useGlobalFilters(...)` before listening. */
  globalFilters?: ExceptionFilter[];
  providers?: Provider[];
  /** Kafka consumer options (merged over the group id). */
  kafkaConsumer?: Record<string, unknown>;
  /** More OutboxModule options (e.g. `tenants`). */
  outbox?: Omit<OutboxModuleOptions, 'relay' | 'consumer'>;
}

/** The MongoDB URI of `db`; on PoppyDB one pooled connection (it binds transactions to the socket). */
export function consumerMongoUri(db: string): string {
  const url = new URL(mongoUriFor(db));
  if (testServers().mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  return url.toString();
}

/** Kafka options of a consumer app: a fresh group that reads its topics from the beginning. */
export function kafkaConsumerOptions(
  groupId: string,
  extra: Record<string, unknown> = {},
): NonNullable<KafkaOptions['options']> {
  return {
    client: { clientId: uniqueName('consumer'), brokers: testServers().kafkaBrokers },
    consumer: { groupId, ...extra },
    subscribe: { fromBeginning: true },
  };
}

/**
 * A Nest microservice on the real Kafka transport with OutboxModule (consumer side only) on
 * database `db`.
 */
export async function startConsumerApp(
  db: string,
  controllers: Type<unknown>[],
  consumer: ConsumerOptions = {},
  extras: ConsumerAppExtras = {},
): Promise<ConsumerApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(consumerMongoUri(db)),
      OutboxModule.forRoot({ ...extras.outbox, relay: false, consumer }),
    ],
    controllers,
    providers: [LedgerService, ...(extras.providers ?? [])],
  }).compile();
  const groupId = uniqueName('group');
  const options = kafkaConsumerOptions(groupId, extras.kafkaConsumer);
  const app = moduleRef.createNestMicroservice(
    extras.outboxServerTopics
      ? { strategy: new OutboxKafkaServer({ ...options, topics: extras.outboxServerTopics }) }
      : { transport: Transport.KAFKA, options },
  );
  app.useLogger(testLogLevels());
  if (extras.globalFilters) app.useGlobalFilters(...extras.globalFilters);
  await app.listen();
  const connection = app.get<Connection>(getConnectionToken());
  return {
    app,
    connection,
    groupId,
    close: async () => {
      await app.close();
    },
  };
}

/** Nest log levels of test apps: none, unless CONSUMER_DEBUG is set. */
export function testLogLevels(): false | Array<'error' | 'warn' | 'log' | 'debug'> {
  return process.env.CONSUMER_DEBUG ? ['error', 'warn', 'log', 'debug'] : false;
}

export interface OutgoingMessage {
  key?: string;
  value: string | Buffer | null;
  headers?: Record<string, string | Buffer>;
  partition?: number;
}

export async function send(topic: string, messages: OutgoingMessage[]): Promise<void> {
  const producer = testKafka('consumer-test-producer').producer();
  await producer.connect();
  try {
    for (const message of messages) {
      // One send per message: each one is a separate delivery, in order.
      await producer.send({ topic, acks: -1, messages: [{ key: 'k', ...message }] });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Creates topics with one partition each (and optional topic configs, e.g. max.message.bytes). */
export async function createTopicsWithConfig(
  topics: string[],
  configEntries: Array<{ name: string; value: string }> = [],
  partitions = 1,
): Promise<void> {
  const admin = testKafka('consumer-test-admin').admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor: 1,
        configEntries,
      })),
    });
  } finally {
    await admin.disconnect();
  }
}

/** Drops database `db` (afterAll). */
export async function dropDatabase(db: string): Promise<void> {
  const { default: mongoose } = await import('mongoose');
  const conn = await mongoose.createConnection(mongoUriFor(db)).asPromise();
  await conn.dropDatabase().catch(() => undefined);
  await conn.close();
}

/** An event message as the relay writes it: JSON value, `ce_id` header. */
export const eventMessage = (
  eventId: string,
  payload: object,
  extra: Partial<OutgoingMessage> = {},
) => ({
  value: JSON.stringify(payload),
  ...extra,
  headers: { ce_id: eventId, ...(extra.headers ?? {}) },
});

export { sleep, waitFor } from '../harness';
