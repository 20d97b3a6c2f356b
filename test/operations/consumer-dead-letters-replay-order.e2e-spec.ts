import { OutboxConsumerDeadLetters } from '../../lib';
import { describeWith, uniqueName } from '../harness';
import { startRelayApp, type RelayTestApp } from '../relay/support/relay-app';

/** A consumer dead letter as the store writes it; `offsetKey: false` as the previous version did. */
function letter(n: number, partition: number, offset: string, offsetKey = true) {
  return {
    consumer: 'ledger',
    eventId: `k-${n}`,
    status: 'dead',
    reason: 'max-failures',
    attempts: 5,
    lastError: 'Error: ledger down',
    errors: [],
    deadLetteredAt: new Date('2026-11-20T10:00:00Z'),
    topic: 'shop.Ledger',
    partition,
    offset,
    ...(offsetKey ? { offsetKey: offset.padStart(20, '0') } : {}),
    key: 'acct-1',
    headers: [{ key: 'ce_type', value: 'LedgerEntry' }],
    value: '{}',
  };
}

/**
 * The order and paging of a consumer dead-letter replay on the real database: Kafka order
 * (topic, partition, numeric offset) for letters of this version and of the previous one, each
 * letter once whatever the page size. The app has no handler of that consumer, so each letter is
 * reported (in `failed`), in the order the replay goes through them.
 */
describeWith(['mongodb'], 'consumer dead-letter replay order', () => {
  const db = uniqueName('consumer-dl-order');
  let app: RelayTestApp;
  let deadLetters: OutboxConsumerDeadLetters;
  const collection = () => app.connection.collection('outbox_consumer_dead_letters');

  beforeAll(async () => {
    app = await startRelayApp(db, false);
    deadLetters = app.app.get(OutboxConsumerDeadLetters);
  });
  afterAll(async () => {
    await app.connection.dropDatabase();
    await app.close();
  });
  beforeEach(() => collection().deleteMany({}));

  it('replays by numeric offset, letters of the previous version included', async () => {
    await collection().insertMany([
      letter(1, 0, '102'),
      letter(2, 0, '98', false),
      letter(3, 1, '5'),
      letter(4, 0, '9223372036854775807'),
      letter(5, 0, '9223372036854775806', false),
      letter(6, 0, '1000'),
      letter(7, 0, '99'),
    ]);
    const dry = await deadLetters.requeueMany({}, { dryRun: true, batchSize: 2 });
    expect(dry.failed.map((f) => f.eventId)).toEqual([
      'k-2',
      'k-7',
      'k-1',
      'k-6',
      'k-5',
      'k-4',
      'k-3',
    ]);
    // The letters of the previous version now carry their sort key.
    expect(await collection().countDocuments({ offsetKey: { $exists: false } })).toBe(0);
  });

  it('goes through every letter once, page after page, whatever stays behind', async () => {
    await collection().insertMany(
      Array.from({ length: 95 }, (_, n) => letter(n, n % 3, String(1000 - n), n % 2 === 0)),
    );
    const result = await deadLetters.requeueMany({ consumer: 'ledger' }, { batchSize: 10 });
    expect(result.batches).toBe(10);
    const ids = result.failed.map((f) => Number(f.eventId.slice(2)));
    expect(new Set(ids).size).toBe(95);
    // Partition by partition, offsets rising (offset 1000 - n: n falling).
    expect(ids).toEqual([...ids].sort((a, b) => (a % 3) - (b % 3) || b - a));
    expect(await deadLetters.count()).toBe(95);
  });
});
