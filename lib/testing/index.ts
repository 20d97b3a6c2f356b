// The `nestjs-outbox/testing` entry point: test your own services without MongoDB or Kafka.
export { OutboxTestingModule } from './outbox-testing.module';
export type { OutboxTestingOptions } from './outbox-testing.module';
export { OutboxTesting } from './outbox-testing.service';
export type { DrainOptions, DrainReport } from './outbox-testing.service';
export type { TestingConsumerDeadLetter } from './consumer/in-memory-consumer.runtime';
export { OutboxDrainError, OutboxExpectationError } from './outbox-testing.errors';
export type { EmittedEvent, EmittedEventFilter } from './emitted-event';
export { ScriptedPublisher } from './relay/scripted.publisher';
