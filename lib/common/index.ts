export * from './errors/outbox.error';
export * from './errors/outbox-options.error';
