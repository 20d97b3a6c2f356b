import { OutboxError } from '../../common/errors/outbox.error';

/** The connected MongoDB is a standalone server: it has neither transactions nor change streams. */
export class OutboxReplicaSetRequiredError extends OutboxError {
  constructor(connectionName?: string) {
    super(
      `OutboxModule needs MongoDB transactions and change streams, which only a replica set or a sharded` +
        ` cluster provides, but the connection${connectionName ? ` '${connectionName}'` : ''} is a standalone server.` +
        ` Start mongod as a replica set (a single node is enough: \`mongod --replSet rs0\`, then` +
        ` \`mongosh --eval "rs.initiate()"\`) and add \`?replicaSet=rs0\` to the connection string.`,
      'OUTBOX_REPLICA_SET_REQUIRED',
      { connectionName },
    );
  }
}
