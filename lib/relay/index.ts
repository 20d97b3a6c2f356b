export * from './relay.options';
export { OutboxRelay, POSITION_LOST_CODES } from './outbox.relay';
export * from './relay.metrics';
export type {
  AggregateRef,
  DeadLetterRecord,
  FailureRecord,
  OutboxRelayStore,
  PendingState,
  RelayStateStore,
} from './relay.store';
export type { OutboxDeadLetter, PublishErrorEntry } from './mongo-relay.store';
export { RelayEngine } from './relay.engine';
export type { RelayEngineOptions } from './relay.engine';
