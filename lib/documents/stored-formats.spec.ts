import type { mongo } from 'mongoose';
import { ensureConsumerDeadLetterIndexes } from '../consumer/stores/consumer-failure.store';
import { ensureProcessedEventIndexes } from '../consumer/stores/processed-event.store';
import { DEAD_LETTER_EVENT_ID_INDEX } from './dead-letter.document';
import { RELAY_OUTBOX_INDEXES } from './outbox-event.document';
import { OutboxEventSchema } from './outbox-event.schema';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../common/outbox-storage.options';
import { ensureRelayIndexes } from '../relay/mongo/relay-indexes';

/**
 * Existing deployments keep their collections and indexes: these are the stored names, keys and
 * options, written out by hand. A change here is a migration, not a refactor.
 */
/** A collection that records `createIndex`; `existing`: what `listIndexes` answers (names, or indexes). */
function recordingCollection(name: string, existing: Array<string | mongo.Document> = []) {
  const created: Array<{ key: unknown; options: unknown }> = [];
  const listed = existing.map((index) =>
    typeof index === 'string' ? { name: index, key: { legacy: 1 } } : index,
  );
  const collection = {
    collectionName: name,
    createIndex: (key: unknown, options: unknown) => {
      created.push({ key, options });
      return Promise.resolve('ok');
    },
    listIndexes: () => ({ toArray: () => Promise.resolve(listed) }),
  };
  return { created, collection: collection as unknown as mongo.Collection<any> };
}

/** Same indexes: keys in the same order (order is part of an index), same options (any order). */
function expectIndexes(
  created: Array<{ key: unknown; options: unknown }>,
  expected: Array<{ key: unknown; options: unknown }>,
): void {
  expect(created).toEqual(expected);
  expect(JSON.stringify(created.map((index) => index.key))).toBe(
    JSON.stringify(expected.map((index) => index.key)),
  );
}

const logger = {
  log: () => undefined,
  debug: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

describe('stored formats', () => {
  it('keeps the default collection names', () => {
    expect(OUTBOX_DEFAULT_COLLECTIONS).toEqual({
      outbox: 'outbox',
      deadLetters: 'outbox_dead_letters',
      relayState: 'outbox_relay_state',
      processedEvents: 'outbox_processed_events',
      consumerDeadLetters: 'outbox_consumer_dead_letters',
      sequences: 'outbox_sequences',
    });
  });

  it("keeps the write side's outbox indexes", () => {
    expect(OutboxEventSchema.indexes()).toEqual([
      [{ eventId: 1 }, { unique: true, name: 'outbox_event_id_unique', background: true }],
      [
        { aggregateType: 1, aggregateId: 1, availableAt: 1 },
        {
          name: 'outbox_scheduled_by_aggregate',
          partialFilterExpression: { status: 'pending', availableAt: { $exists: true } },
          background: true,
        },
      ],
    ]);
    // Key order is part of an index.
    expect(JSON.stringify(OutboxEventSchema.indexes().map(([key]) => key))).toBe(
      JSON.stringify([{ eventId: 1 }, { aggregateType: 1, aggregateId: 1, availableAt: 1 }]),
    );
  });

  it('keeps the fields of the Mongoose schema', () => {
    expect(Object.keys(OutboxEventSchema.paths).sort()).toEqual(
      [
        '_id',
        'aggregateId',
        'aggregateType',
        'attempts',
        'availableAt',
        'cancelledAt',
        'eventId',
        'eventType',
        'headers',
        'lastError',
        'nextAttemptAt',
        'occurredAt',
        'payload',
        'publishedAt',
        'sequence',
        'slot',
        'status',
        'tenant',
      ].sort(),
    );
  });

  it.each([1, 3])("keeps the relay's indexes (%i partitions)", async (partitions) => {
    const outbox = recordingCollection('outbox');
    const deadLetters = recordingCollection('outbox_dead_letters');
    await ensureRelayIndexes(outbox.collection, deadLetters.collection, 604800, logger, partitions);
    const pendingOnly = { status: 'pending' };
    const marked = { status: 'pending', nextAttemptAt: { $exists: true } };
    const scheduled = { status: 'pending', availableAt: { $exists: true } };
    expect(outbox.created).toEqual([
      {
        key: { status: 1, availableAt: 1, _id: 1 },
        options: { name: 'outbox_relay_status_due' },
      },
      {
        key: { aggregateType: 1, aggregateId: 1, sequence: 1, _id: 1 },
        options: { name: 'outbox_relay_aggregate_order', partialFilterExpression: pendingOnly },
      },
      {
        key: { aggregateType: 1, aggregateId: 1 },
        options: { name: 'outbox_relay_marked', partialFilterExpression: marked },
      },
      {
        key: { availableAt: 1, aggregateType: 1, aggregateId: 1, _id: 1 },
        options: { name: 'outbox_relay_due_runs', partialFilterExpression: scheduled },
      },
      ...(partitions > 1
        ? [
            {
              key: { slot: 1, aggregateType: 1, aggregateId: 1, sequence: 1, _id: 1 },
              options: { name: 'outbox_relay_slot_order', partialFilterExpression: pendingOnly },
            },
            {
              key: { slot: 1, aggregateType: 1, aggregateId: 1 },
              options: { name: 'outbox_relay_slot_marked', partialFilterExpression: marked },
            },
            {
              key: { slot: 1, availableAt: 1, aggregateType: 1, aggregateId: 1, _id: 1 },
              options: {
                name: 'outbox_relay_slot_due_runs',
                partialFilterExpression: scheduled,
              },
            },
          ]
        : []),
      {
        key: { publishedAt: 1 },
        options: { name: 'outbox_relay_retention', expireAfterSeconds: 604800 },
      },
      {
        key: { cancelledAt: 1 },
        options: { name: 'outbox_cancelled_retention', expireAfterSeconds: 604800 },
      },
    ]);
    // Key order is part of an index: compare it too.
    expect(JSON.stringify(outbox.created.map((index) => index.key))).toBe(
      JSON.stringify([
        { status: 1, availableAt: 1, _id: 1 },
        { aggregateType: 1, aggregateId: 1, sequence: 1, _id: 1 },
        { aggregateType: 1, aggregateId: 1 },
        { availableAt: 1, aggregateType: 1, aggregateId: 1, _id: 1 },
        ...(partitions > 1
          ? [
              { slot: 1, aggregateType: 1, aggregateId: 1, sequence: 1, _id: 1 },
              { slot: 1, aggregateType: 1, aggregateId: 1 },
              { slot: 1, availableAt: 1, aggregateType: 1, aggregateId: 1, _id: 1 },
            ]
          : []),
        { publishedAt: 1 },
        { cancelledAt: 1 },
      ]),
    );
    expect(deadLetters.created).toEqual([
      { key: { eventId: 1 }, options: { name: 'outbox_dead_letter_event_id', unique: true } },
    ]);
  });

  it("keeps the consumer's indexes", async () => {
    const processed = recordingCollection('outbox_processed_events');
    await ensureProcessedEventIndexes(processed.collection, {} as mongo.Db, 86400);
    expectIndexes(processed.created, [
      {
        key: { consumer: 1, eventId: 1 },
        options: { unique: true, name: 'consumer_1_eventId_1' },
      },
      {
        key: { processedAt: 1 },
        options: { expireAfterSeconds: 86400, name: 'processedAt_ttl' },
      },
    ]);
    const letters = recordingCollection('outbox_consumer_dead_letters');
    await ensureConsumerDeadLetterIndexes(letters.collection);
    expectIndexes(letters.created, [
      {
        key: { consumer: 1, eventId: 1 },
        options: {
          unique: true,
          name: 'consumer_1_eventId_1',
          partialFilterExpression: { eventId: { $type: 'string' } },
        },
      },
      {
        key: { consumer: 1, topic: 1, partition: 1, offset: 1 },
        options: { name: 'consumer_1_topic_1_partition_1_offset_1' },
      },
      { key: { status: 1, deadLetteredAt: 1 }, options: { name: 'status_1_deadLetteredAt_1' } },
      {
        key: { topic: 1, partition: 1, offsetKey: 1, _id: 1 },
        options: { name: 'topic_1_partition_1_offsetKey_1__id_1' },
      },
      { key: { expiresAt: 1 }, options: { expireAfterSeconds: 0, name: 'expiresAt_ttl' } },
    ]);
  });

  it('asks only for the indexes not already there as asked (one listing a collection)', async () => {
    const asAsked = (index: mongo.IndexDescription) => ({ v: 2, ...index });
    const statusDue = RELAY_OUTBOX_INDEXES.statusDue;
    const aggregateOrder = RELAY_OUTBOX_INDEXES.aggregateOrder;
    const outbox = recordingCollection('outbox', [
      asAsked(statusDue),
      // Same name and key, another filter: asked for (the server then refuses, and it is logged).
      asAsked({ ...aggregateOrder, partialFilterExpression: { status: 'failed' } }),
      asAsked(RELAY_OUTBOX_INDEXES.marked),
      asAsked(RELAY_OUTBOX_INDEXES.scheduled),
      asAsked({ ...RELAY_OUTBOX_INDEXES.retention, expireAfterSeconds: 60 }),
      // Another expiry: ensureTtlIndex updates it.
      asAsked({ ...RELAY_OUTBOX_INDEXES.cancelledRetention, expireAfterSeconds: 30 }),
    ]);
    const deadLetters = recordingCollection('outbox_dead_letters', [
      asAsked(DEAD_LETTER_EVENT_ID_INDEX),
    ]);
    await ensureRelayIndexes(outbox.collection, deadLetters.collection, 60, logger);
    expect(outbox.created.map((index) => (index.options as { name: string }).name)).toEqual([
      aggregateOrder.name,
      RELAY_OUTBOX_INDEXES.cancelledRetention.name,
    ]);
    expect(deadLetters.created).toEqual([]);
  });

  it('names an index of an earlier version that no relay reads any more, and leaves it', async () => {
    const warnings: string[] = [];
    const outbox = recordingCollection('outbox', ['outbox_relay_pending']);
    const deadLetters = recordingCollection('outbox_dead_letters');
    const warn = (message: string) => void warnings.push(message);
    await ensureRelayIndexes(outbox.collection, deadLetters.collection, 60, { ...logger, warn });
    expect(warnings).toEqual([
      expect.stringContaining(
        'Index outbox_relay_pending on outbox is no longer used (outbox_relay_status_due replaces it)',
      ),
    ]);
    expect(warnings[0]).toContain("db.outbox.dropIndex('outbox_relay_pending')");
    warnings.length = 0;
    await ensureRelayIndexes(recordingCollection('outbox').collection, deadLetters.collection, 60, {
      ...logger,
      warn,
    });
    expect(warnings).toEqual([]);
  });

  it('updates a TTL index whose expiry changed in place (relay retention, processed records)', async () => {
    const commands: unknown[] = [];
    const db = { command: (command: unknown) => (commands.push(command), Promise.resolve({})) };
    const conflicting = (name: string) =>
      ({
        collectionName: name,
        db,
        createIndex: (key: Record<string, unknown>) =>
          'publishedAt' in key || 'processedAt' in key
            ? Promise.reject(Object.assign(new Error('conflict'), { code: 85 }))
            : Promise.resolve('ok'),
        indexExists: () => Promise.resolve(false),
      }) as unknown as mongo.Collection<any>;
    await ensureRelayIndexes(conflicting('outbox'), conflicting('dl'), 3600, logger);
    await ensureProcessedEventIndexes(
      conflicting('outbox_processed_events'),
      db as unknown as mongo.Db,
      7200,
    );
    expect(commands).toEqual([
      { collMod: 'outbox', index: { name: 'outbox_relay_retention', expireAfterSeconds: 3600 } },
      {
        collMod: 'outbox_processed_events',
        index: { name: 'processedAt_ttl', expireAfterSeconds: 7200 },
      },
    ]);
  });
});
