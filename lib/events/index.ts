export * from './errors';
export * from './emits-event.decorator';
export type { DeclaredEvent, EmitsEventOptions, EventValue } from './emits-event.interface';
export {
  AGGREGATE_ID_PATTERN,
  EVENT_NAME_PATTERN,
  HEADER_NAME_PATTERN,
  MAX_HEADERS,
  MAX_HEADER_VALUE_LENGTH,
} from './event.validator';
export { OutboxEventSchema, getOutboxEventModel } from '../documents/outbox-event.schema';
export { OUTBOX_EVENT_WRITER } from './outbox-event.writer';
export type { NewOutboxEvent } from '../documents/outbox-event.document';
export type { OutboxEventWriter } from './outbox-event.writer';
export * from './outbox.emitter';
export { MAX_SCHEDULE_DELAY_MS, SCHEDULE_PAST_TOLERANCE_MS } from './schedule/emit-schedule';
export type { EmitSchedule } from './schedule/emit-schedule';
export type { CancelScheduledResult } from './schedule/cancel-result';
export { cancelScheduledEvent } from './schedule/cancel-scheduled-event';
