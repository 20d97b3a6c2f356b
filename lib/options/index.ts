export * from './outbox-options.interface';
export * from './resolved-options';
