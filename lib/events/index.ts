// What lib/index.ts takes from the write side.
export * from './errors/invalid-outbox-event.error';
export * from './errors/invalid-schedule.error';
export * from './errors/payload-too-large.error';
export * from './errors/unserializable-payload.error';
export { EmitsEvent } from './emits-event.decorator';
export type { EmitsEventOptions, EventValue } from './emits-event.interface';
export { OutboxEmitter } from './outbox.emitter';
export { MAX_SCHEDULE_DELAY_MS, SCHEDULE_PAST_TOLERANCE_MS } from './schedule/emit-schedule';
export type { EmitSchedule } from './schedule/emit-schedule';
export type { CancelScheduledResult } from './schedule/cancel-result';
