import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase } from '../harness';
import { unlessServers } from './support/contract-cases';
import { outboxRelayStoreContract } from './outbox-relay.store.contract';
import { mongoOutboxStoreFixture } from './support/mongo-ports';

describeWith(['mongodb'], 'OutboxRelayStore contract: MongoOutboxRelayStore', () => {
  let connection: Connection;
  suiteDatabase('contract-outbox', (opened) => (connection = opened));
  outboxRelayStoreContract(() => Promise.resolve(mongoOutboxStoreFixture(connection)), {
    staleAfter: unlessServers(
      ['real-mongodb'],
      'PoppyDB drops a condition on _id that stands next to an $or (measured: `{ _id: { $gt } , $or }` returns earlier ids)',
    ),
  });
});
