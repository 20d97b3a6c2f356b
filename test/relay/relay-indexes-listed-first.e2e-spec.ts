import { mongo } from 'mongoose';
import type { OutboxDeadLetter } from '../../lib/documents/dead-letter.document';
import { RELAY_OUTBOX_INDEXES, type OutboxDoc } from '../../lib/documents/outbox-event.document';
import { ensureRelayIndexes, sameIndex } from '../../lib/relay/mongo/relay-indexes';
import { describeWith, mongoUriFor, testServers, uniqueName } from '../harness';

jest.setTimeout(60_000);

const logger = { log() {}, warn() {}, error() {}, debug() {} };

describeWith(['mongodb'], "the relay's indexes, listed before they are asked for", () => {
  const database = uniqueName('relay-indexes').replace(/-/g, '_');
  let client: mongo.MongoClient;
  const started: Array<{ name: string; command: Record<string, unknown> }> = [];

  beforeAll(async () => {
    client = await new mongo.MongoClient(mongoUriFor(database), {
      monitorCommands: true,
    }).connect();
    client.on('commandStarted', (event) =>
      started.push({ name: event.commandName, command: event.command }),
    );
  });

  afterAll(async () => {
    await client.db(database).dropDatabase();
    await client.close();
  });

  it('asks again only for an index the server does not list as asked (on mongod: none)', async () => {
    const db = client.db(database);
    const outbox = db.collection<OutboxDoc>('outbox');
    const deadLetters = db.collection<OutboxDeadLetter>('outbox_dead_letters');
    await ensureRelayIndexes(outbox, deadLetters, 3600, logger);
    const first = started.filter((one) => one.name === 'createIndexes').length;
    started.length = 0;
    await ensureRelayIndexes(outbox, deadLetters, 3600, logger);
    const again = started.filter((one) => one.name === 'createIndexes');
    expect(started.filter((one) => one.name === 'listIndexes')).toHaveLength(2);
    // Each one asked again is listed otherwise than asked (PoppyDB lists a key's fields in
    // another order; mongod as created, so there nothing is asked again).
    const listed = await outbox.listIndexes().toArray();
    for (const { command } of again) {
      const [asked] = command.indexes as Array<{ name: string }>;
      const wanted = Object.values(RELAY_OUTBOX_INDEXES).find((index) => index.name === asked.name);
      expect({
        asked: asked.name,
        listedAsAsked: sameIndex(
          listed.find((one) => one.name === asked.name),
          wanted ?? { key: {} },
        ),
      }).toEqual({ asked: asked.name, listedAsAsked: false });
    }
    if (testServers().mongoKind === 'mongodb') expect(again).toEqual([]);
    else expect(again.length).toBeLessThan(first);
  });
});
