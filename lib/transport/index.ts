export * from './outbox-kafka.server';
