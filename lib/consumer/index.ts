export * from './consumer.options';
export type { ConsumedMessage } from './input/consumed-message';
export type { EventIdFallback } from './input/event-id.extractor';
export type {
  DtoValidatorOptions,
  PayloadDtoClass,
  PayloadValidateOption,
} from './input/payload.validator';
export type { FailureEntry } from './consume.ports';
export type { ConsumerBatchOptions } from './batch/consumer-batch.options';
export { DEAD_LETTER_HEADERS } from './flow/dead-letter.publisher';
export { IdempotentHandler } from './nest/idempotent-handler.decorator';
export type { IdempotentHandlerOptions } from './idempotent-handler.options';
export { currentHandlerScope, type IdempotentHandlerScope } from './flow/handler-scope';
export { OutboxConsumerMetrics, type OutboxConsumerMetricsSnapshot } from './flow/consumer.metrics';
export * from './consumer.errors';
