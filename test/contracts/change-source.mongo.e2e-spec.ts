import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase } from '../harness';
import { changeSourceContract } from './change-source.contract';
import { unlessServers } from './support/contract-cases';
import { mongoChangeSourceFixture } from './support/mongo-ports';

describeWith(['mongodb'], 'ChangeSource contract: MongoChangeSource', () => {
  let connection: Connection;
  suiteDatabase('contract-changes', (opened) => (connection = opened));
  changeSourceContract(() => Promise.resolve(mongoChangeSourceFixture(connection)), {
    emptyPosition: unlessServers(
      ['real-mongodb'],
      'PoppyDB sends no post-batch resume token, so an idle fresh stream has no position',
    ),
    majority:
      'needs a commit applied but not yet majority-committed, which a single-node replica set (the test servers) never has',
    transient:
      'the test server cannot be made to kill a cursor or step down on demand (the simulated side shows it)',
  });
});
