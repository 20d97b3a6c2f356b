import { Injectable, type INestMicroservice, type Type } from '@nestjs/common';
import { Transport } from '@nestjs/microservices';
import { getConnectionToken, InjectConnection, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection } from 'mongoose';
import { Schema } from 'mongoose';
import { OutboxModule, Transactional, type ConsumerOptions } from '../../lib';
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
  close(): Promise<void>;
}

/**
 * A Nest microservice on the real Kafka transport with OutboxModule (consumer side only) on
 * database `db`. On PoppyDB one pooled connection (it binds transactions to the socket).
 */
export async function startConsumerApp(
  db: string,
  controllers: Type<unknown>[],
  consumer: ConsumerOptions = {},
): Promise<ConsumerApp> {
  const url = new URL(mongoUriFor(db));
  if (testServers().mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(url.toString()),
      OutboxModule.forRoot({ relay: false, consumer }),
    ],
    controllers,
    providers: [LedgerService],
  }).compile();
  const app = moduleRef.createNestMicroservice({
    transport: Transport.KAFKA,
    options: {
      client: { clientId: uniqueName('consumer'), brokers: testServers().kafkaBrokers },
      consumer: { groupId: uniqueName('group') },
      subscribe: { fromBeginning: true },
    },
  });
  app.useLogger(process.env.CONSUMER_DEBUG ? ['error', 'warn', 'log', 'debug'] : false);
  await app.listen();
  const connection = app.get<Connection>(getConnectionToken());
  return {
    app,
    connection,
    close: async () => {
      await app.close();
    },
  };
}

export async function send(
  topic: string,
  messages: Array<{ key?: string; value: string | null; headers?: Record<string, string> }>,
): Promise<void> {
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

export { sleep, waitFor } from '../harness';
