export * from './consumer.options';
export type { ConsumedMessage } from './input/consumed-message';
export type { EventIdFallback } from './input/event-id.extractor';
export { FORBIDDEN_PAYLOAD_KEYS } from '../common/payload-keys.rule';
export type {
  DtoValidatorOptions,
  PayloadDtoClass,
  PayloadValidateOption,
} from './input/payload.validator';
export { DEFAULT_DTO_VALIDATOR_OPTIONS } from './input/payload.validator';
export type { DeadLetterReason, FailureEntry } from './consume.ports';
export type { ConsumerDeadLetterDocument } from '../documents/consumer-dead-letter.document';
export type { DeadLetterCopy } from './input/dead-letter.copy';
export type { ProcessedEventDocument } from '../documents/processed-event.document';
export { DEAD_LETTER_HEADERS } from './flow/dead-letter.publisher';
export { IdempotentHandler } from './nest/idempotent-handler.decorator';
export type { IdempotentHandlerOptions } from './idempotent-handler.options';
export { currentHandlerScope, type IdempotentHandlerScope } from './flow/handler-scope';
export { OutboxConsumerMetrics, type OutboxConsumerMetricsSnapshot } from './flow/consumer.metrics';
export * from './errors';
