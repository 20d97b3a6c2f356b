export * from './outbox-options.interface';
export * from './resolved-options';
export { OUTBOX_DEFAULTS, OUTBOX_DEFAULT_COLLECTIONS } from './outbox.defaults';
