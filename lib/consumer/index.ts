export * from './consumer.options';
export type { ConsumedMessage } from './consumed-message';
export type { EventIdFallback } from './event-id.extractor';
export { FORBIDDEN_PAYLOAD_KEYS } from '../common/payload-keys.rule';
export type {
  DtoValidatorOptions,
  PayloadDtoClass,
  PayloadValidateOption,
} from './payload.validator';
export { DEFAULT_DTO_VALIDATOR_OPTIONS } from './payload.validator';
export type { DeadLetterReason, FailureEntry } from './consume.ports';
export type { ConsumerDeadLetterDocument } from '../documents/consumer-dead-letter.document';
export type { DeadLetterCopy } from './dead-letter.copy';
export type { ProcessedEventDocument } from '../documents/processed-event.document';
export { DEAD_LETTER_HEADERS } from './dead-letter.publisher';
export { IdempotentHandler } from './idempotent-handler.decorator';
export type { IdempotentHandlerOptions } from './idempotent-handler.options';
export { currentHandlerScope, type IdempotentHandlerScope } from './handler-scope';
export { OutboxConsumerMetrics, type OutboxConsumerMetricsSnapshot } from './consumer.metrics';
export * from './errors';
