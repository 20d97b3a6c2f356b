import { describeWith } from '../harness';
import { startWriteSideApp } from '../write-side/write-side.fixtures';
import type { WriteSideApp } from '../write-side/write-side.fixtures';
import { scheduling } from '../write-side/scheduled-events.fixtures';
import { scheduledWritesContract } from './scheduled-writes.contract';
import { unlessServers } from './support/contract-cases';

/**
 * The schedule rules with the production writer on the run's MongoDB (relay off: `publishDue`
 * marks what the relay would). Cancel checks "not yet due" with `$$NOW` in an update pipeline,
 * which PoppyDB does not evaluate: those cases need a real mongod.
 */
describeWith(['mongodb'], 'scheduled writes contract: the production writer on MongoDB', () => {
  let ctx: WriteSideApp;
  afterAll(() => ctx?.close());
  const needsNow = unlessServers(
    ['real-mongodb'],
    'cancel compares the due time with $$NOW in an update pipeline',
  );

  scheduledWritesContract(
    async () => {
      ctx = await startWriteSideApp({ scheduledEvents: true });
      const { emit, runner, emitter } = scheduling(ctx);
      const outbox = ctx.connection.collection('outbox');
      return {
        emit,
        inTransaction: (fn) => runner.run(fn),
        cancel: (id) => emitter.cancel(id),
        publishDue: async () => {
          const now = new Date();
          await outbox.updateMany(
            {
              status: 'pending',
              $or: [{ availableAt: { $exists: false } }, { availableAt: { $lte: now } }],
            },
            { $set: { status: 'published', publishedAt: now } },
          );
        },
        stored: async (eventId) =>
          (await outbox.findOne<{ status: string; availableAt?: Date }>({ eventId })) ?? undefined,
      };
    },
    {
      cancelOnce: needsNow,
      cancelTwiceInOne: needsNow,
      cancelOutcomes: needsNow,
      cancelPublished: needsNow,
    },
  );
});
