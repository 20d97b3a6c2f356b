import type { OutboxDoc } from '../../documents/outbox-event.document';

/**
 * What `OutboxEmitter.cancel(eventId)` (and `cancelScheduledEvent`) did, by `outcome`:
 * - `cancelled`: the event will never be published (`alreadyCancelled`: an earlier call did it).
 *   An event emitted in the same transaction attempt is dropped before it is written: no
 *   `availableAt` / `cancelledAt` then, and no document;
 * - `already-due`: its `availableAt` had passed by the server's clock: it is (being) published;
 * - `published`: the relay published it already;
 * - `not-scheduled`: it has no `availableAt` (an immediate event): cancel only applies to
 *   scheduled ones;
 * - `not-found`: no event with this id in the outbox (never written, rolled back, or removed by
 *   retention).
 */
export type CancelScheduledResult =
  | {
      outcome: 'cancelled';
      eventId: string;
      /** Absent for an event emitted in the same transaction attempt (never written). */
      availableAt?: Date;
      /** The server's time of the cancel. Absent as `availableAt`. */
      cancelledAt?: Date;
      alreadyCancelled: boolean;
    }
  | { outcome: 'already-due'; eventId: string; availableAt: Date }
  | { outcome: 'published'; eventId: string; publishedAt?: Date }
  | { outcome: 'not-scheduled'; eventId: string }
  | { outcome: 'not-found'; eventId: string };

/** The fields `cancelResultOf` reads. */
export const CANCEL_PROJECTION = {
  _id: 0,
  status: 1,
  availableAt: 1,
  publishedAt: 1,
  cancelledAt: 1,
} as const;

export type CancelView = Pick<OutboxDoc, 'status' | 'availableAt' | 'publishedAt' | 'cancelledAt'>;

/**
 * What a cancel did, from the event's document: the one this cancel's update returned
 * (`cancelledNow`), or, when it matched nothing, the one read in the same transaction snapshot
 * as the refused update, so it is the state the server judged.
 */
export function cancelResultOf(
  eventId: string,
  doc: CancelView | null | undefined,
  cancelledNow = false,
): CancelScheduledResult {
  if (!doc) return { outcome: 'not-found', eventId };
  if (doc.status === 'cancelled') {
    return {
      outcome: 'cancelled',
      eventId,
      availableAt: doc.availableAt as Date,
      cancelledAt: doc.cancelledAt as Date,
      alreadyCancelled: !cancelledNow,
    };
  }
  if (doc.status === 'published') {
    return { outcome: 'published', eventId, publishedAt: doc.publishedAt };
  }
  if (!doc.availableAt) return { outcome: 'not-scheduled', eventId };
  // Pending (or dead: the relay tried it, so it was due) and scheduled, yet refused: due.
  return { outcome: 'already-due', eventId, availableAt: doc.availableAt };
}
