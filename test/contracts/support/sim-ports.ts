import type {
  OutboxDeadLetter,
  OutboxDoc,
} from '../../../lib/relay/mongo/mongo-outbox-relay.store';
import { copyDoc } from '../../simulation/mongo/sim-database';
import { SimOutboxStore } from '../../simulation/mongo/sim-outbox.store';
import type { OutboxStoreFixture } from '../outbox-relay.store.contract';
import { driven } from './sim-driver';
import { SimMongoWorld } from './sim-mongo.world';

/** The simulated `OutboxRelayStore` (test/simulation/mongo/sim-outbox.store.ts). */
export function simOutboxStoreFixture(): OutboxStoreFixture {
  const world = new SimMongoWorld();
  return {
    store: (range) =>
      driven(
        world.scheduler,
        new SimOutboxStore(
          world.connection,
          world.db,
          world.history,
          range ? { range, leaseScope: 'contract-partition' } : undefined,
        ),
      ),
    insert: (events) => world.insert(events),
    stored: (event) => {
      const doc = world.db.inspect(event.eventId);
      return Promise.resolve(doc ? (copyDoc(doc) as unknown as OutboxDoc) : undefined);
    },
    deadLetters: (eventId) => {
      const letter = world.db.deadLetters.get(eventId);
      return Promise.resolve(letter ? [letter as unknown as OutboxDeadLetter] : []);
    },
  };
}
