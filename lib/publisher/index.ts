export * from './outbox-publisher.interface';
export * from './kafka/kafka.publisher';
export type { KafkaSender, TopicBatch, PartitionedMessage } from './kafka/kafka.sender';
export * from './kafka-message.mapper';
export { classifyKafkaError } from './kafka/kafka-error.classifier';
export type { KafkaErrorClass, KafkaErrorScope } from './kafka/kafka-error.classifier';
export * from './topic-name';
export * from './errors';
