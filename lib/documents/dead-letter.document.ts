import type { mongo } from 'mongoose';
import type {
  DeadLetterRecord,
  OutboxEventRecord,
  PublishErrorEntry,
} from './outbox-event.document';

export const DEAD_LETTERS_COLLECTION = 'outbox_dead_letters'; // the option's default

/** A document of the dead-letter collection: the event as it was, and why the relay gave up. */
export interface OutboxDeadLetter extends Omit<OutboxEventRecord, '_id' | 'status'> {
  /** `_id` of the event in the outbox collection. */
  outboxId: unknown;
  reason: DeadLetterRecord['reason'];
  attempts: number;
  lastError: string;
  errors: PublishErrorEntry[];
  deadLetteredAt: Date;
}

/** One dead letter per event: the move from the outbox is idempotent by `eventId`. */
export const DEAD_LETTER_EVENT_ID_INDEX = {
  key: { eventId: 1 },
  name: 'outbox_dead_letter_event_id',
  unique: true,
} as const satisfies mongo.IndexDescription;
