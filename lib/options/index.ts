export * from './outbox-options.interface';
export * from './resolved-options';
export { OUTBOX_DEFAULTS, OUTBOX_DEFAULT_COLLECTIONS } from './outbox.defaults';
/** Token of the resolved options, inside the module (not exported by it, not public). */
export { OUTBOX_RESOLVED_OPTIONS } from '../common/outbox.constants';
