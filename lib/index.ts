// The public API. Each concern exports its public surface from its own barrel.
export * from './common';
export * from './options';
export * from './transaction';
export * from './events';
export * from './publisher';
export * from './relay';
export * from './consumer';
export * from './transport';
export * from './operations';
export * from './health';
export { OutboxModule } from './outbox.module';
