export * from './event-type.deserializer';
export * from './outbox-kafka.server';
