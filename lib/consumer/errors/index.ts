export * from './consumer-retry.error';
export * from './idempotent-handler-options.error';
