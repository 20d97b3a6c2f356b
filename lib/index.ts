/**
 * The public API: what an application uses. Everything else (the relay's engine and stores, the
 * option resolvers, the Kafka message mapping, internal tokens) is internal; the tests and the
 * benchmarks import it by path. `public-api.spec.ts` lists this surface, so a change to it is a
 * visible diff.
 */

// The module
export { OutboxModule } from './outbox.module';
export type { OutboxModuleExtras } from './outbox.module-definition';
export type { OutboxCollections } from './common/outbox-storage.options';
export type { OutboxModuleOptions } from './options/outbox-options.interface';

// Injection, per connection (as @nestjs/mongoose's getConnectionToken / @InjectConnection)
export { InjectOutboxEmitter, InjectTransactionRunner } from './injection/outbox-inject.decorators';
export {
  getOutboxEmitterToken,
  getOutboxToken,
  getTransactionRunnerToken,
} from './injection/outbox-token.utils';

// Write side: transactions and events
export { Propagation, Transactional, TransactionRunner } from './transaction';
export type { TransactionalOptions } from './transaction';
export {
  EmitsEvent,
  MAX_SCHEDULE_DELAY_MS,
  OutboxEmitter,
  SCHEDULE_PAST_TOLERANCE_MS,
} from './events';
export type { CancelScheduledResult, EmitSchedule, EmitsEventOptions, EventValue } from './events';
export { KAFKA_HEADERS } from './documents/outbox-event.envelope';
export type { OutboxEventInput } from './documents/outbox-event.envelope';
export type { OutboxDeadLetter } from './documents/dead-letter.document';
export type {
  OutboxEventRecord,
  OutboxEventStatus,
  PublishErrorEntry,
} from './documents/outbox-event.document';

// Tenants: an outbox in each tenant's database (docs/tenants.md)
export {
  currentTenant,
  OutboxTenantContext,
  OutboxTenantNotResolvedError,
  runInTenant,
  TENANT_HEADER,
} from './tenants';
export { OutboxTenants } from './outbox-tenants.service';
export type { OutboxTenantsOptions, TenantDatabases, TenantTarget } from './tenants';

// Relay and publishing
export { OutboxRelay, OutboxRelayMetrics } from './relay';
export type {
  HeldDestination,
  OutboxRelayMetricsSnapshot,
  PartitionStatus,
  RelayBackoffOptions,
  RelayCheckpointOptions,
  RelayLeaseOptions,
  RelayOptions,
  RelayStatus,
  StreamState,
} from './relay';
export type {
  KafkaConnectionOptions,
  OutboxPublisher,
  PublishContext,
  PublishFatal,
  PublishOk,
  PublishFailureScope,
  PublishOutcome,
  PublishRetriable,
} from './publisher';

// Consuming
export {
  currentHandlerScope,
  DEAD_LETTER_HEADERS,
  IdempotentHandler,
  OutboxConsumerMetrics,
} from './consumer';
export type {
  ConsumedMessage,
  ConsumerBatchOptions,
  ConsumerOptions,
  DtoValidatorOptions,
  EventIdFallback,
  FailureEntry,
  IdempotentHandlerOptions,
  IdempotentHandlerScope,
  OutboxConsumerMetricsSnapshot,
  PayloadDtoClass,
  PayloadValidateOption,
} from './consumer';
export type {
  ConsumerDeadLetterDocument,
  DeadLetterCopy,
  DeadLetterReason,
} from './documents/consumer-dead-letter.document';
export type { ProcessedEventDocument } from './documents/processed-event.document';
export { OutboxKafkaServer } from './transport';
export type { OutboxKafkaServerOptions } from './transport';

// Operations
export {
  DeadLetterFilterError,
  OutboxConsumerDeadLetters,
  OutboxDeadLetterNotFoundError,
  OutboxDeadLetters,
} from './operations';
export type {
  DeadLetterFilter,
  DeadLetterPurgeResult,
  DeadLetterRequeueResult,
} from './operations';
export { OutboxHealthCheckError, OutboxHealthIndicator } from './health';
export type {
  CheckpointReport,
  OplogWindow,
  OutboxHealthOptions,
  OutboxHealthReport,
  PartitionHealth,
  PartitionsReport,
  ScheduledHealth,
} from './health';

// Diagnostics channels (node:diagnostics_channel)
export { OUTBOX_CHANNELS } from './diagnostics';
export type {
  ConsumerDeadLetteredMessage,
  ConsumerEventMessage,
  OutboxChannelName,
  RelayDeadLetteredMessage,
  RelayDestinationHeldMessage,
  RelayDestinationReleasedMessage,
  RelayEventMessage,
  RelayLeaseLostMessage,
  RelayLeaseTakenMessage,
  RelayPartitionHandedOverMessage,
  RelayRetryScheduledMessage,
} from './diagnostics';

// Errors
export { OutboxError, OutboxOptionsError } from './common';
export {
  OutboxNotInitializedError,
  OutboxReplicaSetRequiredError,
  OutboxTransactionClosedError,
  OutboxTransactionRequiredError,
  TransactionPropagationError,
} from './transaction';
export {
  InvalidOutboxEventError,
  InvalidScheduleError,
  PayloadTooLargeError,
  UnserializablePayloadError,
} from './events';
export { InvalidTopicError, PublishRejectedError, PublisherConfigurationError } from './publisher';
export {
  ConsumerRetryError,
  HandlerTimeoutError,
  IdempotentHandlerBootstrapError,
  IdempotentHandlerOptionsError,
  OutsideIdempotentHandlerError,
  UnrecoverableEventError,
} from './consumer';
