import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../documents/outbox-event.document';
import { cancelEach } from './scheduled.command';
import type { ScheduledCommand } from './scheduled.args';

/** A collection that records the write concern of the handle each cancel went through. */
function recordingOutbox(uriWriteConcern: mongo.WriteConcernSettings) {
  const writes: Array<mongo.WriteConcernSettings | undefined> = [];
  const handle = (writeConcern?: mongo.WriteConcernSettings) => ({
    collectionName: 'outbox',
    db,
    findOneAndUpdate: async () => {
      writes.push(writeConcern);
      return { eventId: 'e-1', status: 'cancelled', cancelledAt: new Date(0) };
    },
    findOne: async () => null,
  });
  const db = {
    collection: (_name: string, options?: { writeConcern?: mongo.WriteConcernSettings }) =>
      handle(options?.writeConcern ?? uriWriteConcern),
  };
  return { outbox: handle(uriWriteConcern) as unknown as mongo.Collection<OutboxDoc>, writes };
}

const command: ScheduledCommand = {
  action: 'cancel',
  uri: 'mongodb://127.0.0.1:1/shop?w=1',
  filter: {},
  eventIds: ['e-1'],
  limit: 100,
  dryRun: false,
  json: false,
  collections: {},
};
const io = { out: () => undefined, err: () => undefined, ask: async () => '' };

describe('scheduled cancel (the CLI)', () => {
  it('writes the cancel with w: "majority" even when the URI says w=1 (a rollback cannot undo a reported cancel)', async () => {
    const { outbox, writes } = recordingOutbox({ w: 1 });
    expect(await cancelEach(outbox, command, io)).toBe(0);
    expect(writes).toEqual([{ w: 'majority' }]);
  });
});
