import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase } from '../harness';
import { relayStateStoreContract } from './relay-state.store.contract';
import { mongoStateStoreFixture } from './support/mongo-ports';

describeWith(['mongodb'], 'RelayStateStore contract: MongoRelayStateStore', () => {
  let connection: Connection;
  suiteDatabase('contract-state', (opened) => (connection = opened));
  relayStateStoreContract(() => Promise.resolve(mongoStateStoreFixture(connection)));
});
