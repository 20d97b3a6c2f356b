export * from './invalid-outbox-event.error';
export * from './payload-too-large.error';
export * from './unserializable-payload.error';
export * from './invalid-schedule.error';
