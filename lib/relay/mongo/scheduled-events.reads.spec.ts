import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { SCHEDULED_COUNT_CAP } from '../ports/outbox-relay.store';
import { ScheduledEventReads } from './scheduled-events.reads';

/** A collection holding `pending` scheduled events, answering counts as MongoDB does with `limit`. */
function collection(pending: number) {
  const counts: Array<mongo.CountDocumentsOptions | undefined> = [];
  const fake = {
    countDocuments: async (_filter: unknown, options?: mongo.CountDocumentsOptions) => {
      counts.push(options);
      return options?.limit === undefined ? pending : Math.min(pending, options.limit);
    },
    findOne: async () => ({ availableAt: new Date(0) }),
  };
  return { outbox: fake as unknown as mongo.Collection<OutboxDoc>, counts };
}

describe('the scheduled events count of each sweep and health probe', () => {
  it('is capped: it reads at most SCHEDULED_COUNT_CAP keys however many wait, and says so', async () => {
    const { outbox, counts } = collection(1_000_000);
    const stats = await new ScheduledEventReads(outbox, {}).stats(new Date(1));
    expect(counts).toEqual([{ limit: SCHEDULED_COUNT_CAP }]);
    expect(stats).toMatchObject({ count: SCHEDULED_COUNT_CAP, countCapped: true });
  });

  it('below the cap: the exact count, not marked capped', async () => {
    const { outbox } = collection(42);
    const stats = await new ScheduledEventReads(outbox, {}).stats(new Date(1));
    expect(stats.count).toBe(42);
    expect(stats.countCapped).toBeUndefined();
  });
});
