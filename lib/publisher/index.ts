export * from './outbox-publisher.interface';
export * from './kafka.publisher';
export * from './kafka-message.mapper';
export { classifyKafkaError, FATAL_KAFKA_ERROR_TYPES } from './kafka-error.classifier';
export * from './topic-name';
export * from './errors';
