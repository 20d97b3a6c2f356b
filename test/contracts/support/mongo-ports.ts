import type { Connection } from 'mongoose';
import type {
  OutboxDeadLetter,
  OutboxDoc,
} from '../../../lib/relay/mongo/mongo-outbox-relay.store';
import { MongoOutboxRelayStore } from '../../../lib/relay/mongo/mongo-outbox-relay.store';
import type { OutboxStoreFixture } from '../outbox-relay.store.contract';

let fixtures = 0;

/** Collection names of their own for one fixture (the suite's database is shared by its cases). */
export function freshCollections() {
  fixtures++;
  return {
    outbox: `outbox_${fixtures}`,
    deadLetters: `outbox_dead_letters_${fixtures}`,
    relayState: `outbox_relay_state_${fixtures}`,
  };
}

/** `MongoOutboxRelayStore` (lib/relay/mongo) on the run's MongoDB. */
export function mongoOutboxStoreFixture(connection: Connection): OutboxStoreFixture {
  const db = connection.db!;
  const names = freshCollections();
  const outbox = db.collection<OutboxDoc>(names.outbox);
  return {
    store: (range) => new MongoOutboxRelayStore(db, names, range),
    insert: async (events) => {
      for (const event of events) await outbox.insertOne({ ...event } as OutboxDoc);
    },
    stored: async (event) => (await outbox.findOne({ _id: event._id })) ?? undefined,
    deadLetters: (eventId) =>
      db
        .collection<OutboxDeadLetter>(names.deadLetters)
        .find({ eventId }, { projection: { _id: 0 } })
        .toArray() as Promise<OutboxDeadLetter[]>,
  };
}
