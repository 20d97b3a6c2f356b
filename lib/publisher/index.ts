export * from './outbox-publisher.interface';
export * from './kafka/kafka.publisher';
export * from './kafka-message.mapper';
export * from './errors/invalid-topic.error';
export * from './errors/publish-rejected.error';
export * from './errors/publisher-configuration.error';
