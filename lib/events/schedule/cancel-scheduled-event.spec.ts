import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { cancelScheduledEvent } from './cancel-scheduled-event';
import type { CancelView } from './cancel-result';

const availableAt = new Date('2026-12-02T10:00:00Z');
const cancelledAt = new Date('2026-12-01T10:00:00Z');

/** An outbox whose conditional update returns `updated`, and whose read then finds `current`. */
const outbox = (updated: CancelView | null, current: CancelView | null) =>
  ({
    findOneAndUpdate: async () => updated,
    findOne: async () => current,
  }) as unknown as mongo.Collection<OutboxDoc>;

describe('cancelScheduledEvent (the result, from the documents the server returns)', () => {
  it('reports the cancel its own update made, with the server times', async () => {
    const cancelled = { status: 'cancelled' as const, availableAt, cancelledAt };
    expect(await cancelScheduledEvent(outbox(cancelled, null), 'e-1')).toEqual({
      outcome: 'cancelled',
      eventId: 'e-1',
      availableAt,
      cancelledAt,
      alreadyCancelled: false,
    });
  });

  it('reports an earlier cancel as already cancelled, and other refusals by the state read', async () => {
    const earlier = { status: 'cancelled' as const, availableAt, cancelledAt };
    expect(await cancelScheduledEvent(outbox(null, earlier), 'e-1')).toMatchObject({
      outcome: 'cancelled',
      alreadyCancelled: true,
    });
    expect(await cancelScheduledEvent(outbox(null, null), 'e-2')).toEqual({
      outcome: 'not-found',
      eventId: 'e-2',
    });
    expect(
      await cancelScheduledEvent(outbox(null, { status: 'pending', availableAt }), 'e-3'),
    ).toEqual({ outcome: 'already-due', eventId: 'e-3', availableAt });
  });
});
