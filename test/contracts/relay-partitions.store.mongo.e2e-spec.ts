import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase } from '../harness';
import { relayPartitionsContract } from './relay-partitions.store.contract';
import { mongoPartitionsFixture } from './support/mongo-ports';

describeWith(['mongodb'], 'RelayPartitionPorts contract: MongoRelayPartitions', () => {
  let connection: Connection;
  suiteDatabase('contract-partitions', (opened) => (connection = opened));
  relayPartitionsContract(() => Promise.resolve(mongoPartitionsFixture(connection)));
});
