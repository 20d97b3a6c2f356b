import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import * as api from './index';

/**
 * The package's public surface, as a list: adding, removing or renaming an export shows up here as
 * a diff to review (is it something applications use, or something for our own tests?).
 */
const VALUES = [
  'ConsumerRetryError',
  'DEAD_LETTER_HEADERS',
  'EmitsEvent',
  'IdempotentHandler',
  'IdempotentHandlerOptionsError',
  'InjectOutboxEmitter',
  'InjectTransactionRunner',
  'InvalidOutboxEventError',
  'InvalidTopicError',
  'KAFKA_HEADERS',
  'OutboxDeadLetterNotFoundError',
  'OutboxDeadLetters',
  'OutboxEmitter',
  'OutboxError',
  'OutboxKafkaServer',
  'OutboxModule',
  'OutboxNotInitializedError',
  'OutboxOptionsError',
  'OutboxRelay',
  'OutboxRelayMetrics',
  'OutboxTenantContext',
  'OutboxTenantNotResolvedError',
  'OutboxTenants',
  'TENANT_HEADER',
  'currentTenant',
  'runInTenant',
  'OutboxReplicaSetRequiredError',
  'OutboxTransactionClosedError',
  'OutboxTransactionRequiredError',
  'PayloadTooLargeError',
  'Propagation',
  'PublishRejectedError',
  'PublisherConfigurationError',
  'Transactional',
  'TransactionPropagationError',
  'TransactionRunner',
  'UnserializablePayloadError',
  'currentHandlerScope',
  'HandlerTimeoutError',
  'IdempotentHandlerBootstrapError',
  'OutboxConsumerMetrics',
  'OutsideIdempotentHandlerError',
  'UnrecoverableEventError',
  'getOutboxEmitterToken',
  'getOutboxToken',
  'getTransactionRunnerToken',
  // Operations (issue 13): dead letters by filter, health
  'DeadLetterFilterError',
  'OutboxConsumerDeadLetters',
  'OutboxHealthCheckError',
  'OutboxHealthIndicator',
  // Diagnostics channels (issue 21)
  'OUTBOX_CHANNELS',
  // Scheduled events (issue 22): the error of a bad schedule, and its documented bounds
  'InvalidScheduleError',
  'MAX_SCHEDULE_DELAY_MS',
  'SCHEDULE_PAST_TOLERANCE_MS',
];

const TYPES = [
  'DeadLetterFilter',
  'DeadLetterPurgeResult',
  'DeadLetterRequeueResult',
  'OplogWindow',
  'OutboxHealthOptions',
  'CheckpointReport',
  'PartitionHealth',
  'PartitionsReport',
  'ScheduledHealth',
  'OutboxHealthReport',
  'ConsumedMessage',
  'ConsumerBatchOptions',
  'ConsumerDeadLetterDocument',
  'ConsumerOptions',
  'DeadLetterReason',
  'EmitsEventOptions',
  'EventIdFallback',
  'EventValue',
  'DeadLetterCopy',
  'DtoValidatorOptions',
  'FailureEntry',
  'HeldDestination',
  'IdempotentHandlerOptions',
  'IdempotentHandlerScope',
  'OutboxConsumerMetricsSnapshot',
  'PayloadDtoClass',
  'PublishFailureScope',
  'RelayStatus',
  'StreamState',
  'KafkaConnectionOptions',
  'OutboxCollections',
  'OutboxDeadLetter',
  'OutboxEventInput',
  'OutboxEventRecord',
  'OutboxEventStatus',
  'OutboxKafkaServerOptions',
  'OutboxModuleExtras',
  'OutboxModuleOptions',
  'OutboxPublisher',
  'OutboxRelayMetricsSnapshot',
  'OutboxTenantsOptions',
  'TenantDatabases',
  'TenantTarget',
  'PartitionStatus',
  'PayloadValidateOption',
  'ProcessedEventDocument',
  'PublishContext',
  'PublishErrorEntry',
  'PublishFatal',
  'PublishOk',
  'PublishOutcome',
  'PublishRetriable',
  'RelayBackoffOptions',
  'RelayCheckpointOptions',
  'RelayLeaseOptions',
  'RelayOptions',
  'TransactionalOptions',
  // Diagnostics channels (issue 21): the message of each channel
  'ConsumerDeadLetteredMessage',
  'ConsumerEventMessage',
  'OutboxChannelName',
  'RelayDeadLetteredMessage',
  'RelayDestinationHeldMessage',
  'RelayDestinationReleasedMessage',
  'RelayEventMessage',
  'RelayLeaseLostMessage',
  'RelayLeaseTakenMessage',
  'RelayPartitionHandedOverMessage',
  'RelayRetryScheduledMessage',
  // Scheduled events (issue 22): emit's second argument, cancel's result
  'CancelScheduledResult',
  'EmitSchedule',
];

/**
 * Every name `lib/index.ts` exports, values and types alike. It re-exports by name only (an
 * `export *` would let a barrel change the surface unseen), so reading its syntax is exact.
 */
function exportedNames(): string[] {
  const file = join(__dirname, 'index.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (!clause || !ts.isNamedExports(clause)) {
      throw new Error(`lib/index.ts: export names explicitly, not "${statement.getText(source)}"`);
    }
    names.push(...clause.elements.map((element) => element.name.text));
  }
  return names;
}

const sorted = (names: readonly string[]) => [...names].sort((a, b) => a.localeCompare(b));

describe('public API (lib/index.ts)', () => {
  it('exports exactly these values', () => {
    expect(sorted(Object.keys(api))).toEqual(sorted(VALUES));
  });

  it('exports exactly these names (values and types)', () => {
    expect(sorted(exportedNames())).toEqual(sorted([...VALUES, ...TYPES]));
  });

  it('keeps what exists for our tests and benchmarks internal', () => {
    for (const internal of [
      'RelayEngine',
      'resolveOutboxOptions',
      'resolveRelayOptions',
      'resolveConsumerOptions',
      'toKafkaMessage',
      'classifyKafkaError',
      'OUTBOX_EVENT_WRITER',
      'OUTBOX_RESOLVED_OPTIONS',
      'KafkaPublisher',
      'getOutboxEventModel',
      // the CLI's cancel (issue 22) runs on it, by path
      'cancelScheduledEvent',
    ]) {
      expect(api).not.toHaveProperty(internal);
    }
  });
});
