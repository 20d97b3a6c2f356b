export * from '../documents/outbox-event.envelope';
export * from './errors/outbox.error';
export * from './errors/outbox-options.error';
export { OUTBOX_PUBLISHER } from './outbox.constants';
