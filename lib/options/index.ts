export * from './outbox-options.interface';
export * from './resolved-options';
export { OUTBOX_DEFAULTS, OUTBOX_DEFAULT_COLLECTIONS } from './outbox.defaults';
/** Inject the resolved options with `@Inject(OUTBOX_RESOLVED_OPTIONS)`. */
export { OUTBOX_RESOLVED_OPTIONS } from '../common/outbox.constants';
