import { Schema } from 'mongoose';
import type { Connection, Model, SchemaDefinitionProperty } from 'mongoose';
import {
  OUTBOX_EVENT_ID_INDEX,
  OUTBOX_EVENT_STATUSES,
  OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX,
  SLOT_COUNT,
} from './outbox-event.document';
import type { NewOutboxEvent, OutboxEventRecord } from './outbox-event.document';

/**
 * The outbox document (`OutboxEventRecord`: one path per field, checked by `satisfies`). The
 * write side inserts `pending` rows (and cancels scheduled ones); the relay owns every later change and its own indexes.
 * `autoIndex`/`autoCreate` are off: indexes are created at bootstrap when `createIndexes` is true.
 */
export const OutboxEventSchema = new Schema<OutboxEventRecord>(
  {
    eventId: { type: String, required: true },
    aggregateType: { type: String, required: true },
    aggregateId: { type: String, required: true },
    eventType: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    headers: { type: Schema.Types.Mixed },
    occurredAt: { type: Date, required: true },
    sequence: { type: Number },
    // eventSlot(aggregateType, aggregateId): relay partitions read slot ranges.
    slot: { type: Number, min: 0, max: SLOT_COUNT - 1 },
    tenant: { type: String },
    status: {
      type: String,
      required: true,
      enum: OUTBOX_EVENT_STATUSES,
      default: 'pending' as const,
    },
    availableAt: { type: Date },
    cancelledAt: { type: Date },
    attempts: { type: Number, required: true, default: 0 },
    nextAttemptAt: { type: Date },
    lastError: { type: String },
    publishedAt: { type: Date },
  } satisfies Record<keyof NewOutboxEvent, SchemaDefinitionProperty>,
  {
    versionKey: false,
    minimize: false,
    strict: false,
    autoIndex: false,
    autoCreate: false,
  },
);
for (const { key, ...indexOptions } of [
  OUTBOX_EVENT_ID_INDEX,
  OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX,
]) {
  OutboxEventSchema.index(key, indexOptions);
}

const MODEL_PREFIX = 'NestjsOutboxEvent';

/**
 * The outbox Model of `connection` for `collection` (created once, then reused). Writes through it
 * pick up the session of the current `connection.transaction()` via Mongoose's AsyncLocalStorage.
 */
export function getOutboxEventModel(
  connection: Connection,
  collection: string,
): Model<OutboxEventRecord> {
  const name = `${MODEL_PREFIX}:${collection}`;
  const existing = connection.models[name] as Model<OutboxEventRecord> | undefined;
  return existing ?? connection.model<OutboxEventRecord>(name, OutboxEventSchema, collection);
}
