export * from './consumer-retry.error';
export * from './handler-timeout.error';
export * from './idempotent-handler-bootstrap.error';
export * from './idempotent-handler-options.error';
export * from './outside-idempotent-handler.error';
export * from './unrecoverable-event.error';
