export * from './relay.options';
export { OutboxRelay } from './outbox.relay';
export * from './relay.metrics';
export type { RelayStatus, HeldDestination, StreamState, PartitionStatus } from './relay.status';
export { POSITION_LOST_CODES } from './mongo/mongo-change.source';
export type {
  AggregateRef,
  DeadLetterRecord,
  FailureRecord,
  OutboxRelayStore,
  PendingState,
} from './ports/outbox-relay.store';
export type { RelayStateStore } from './ports/relay-state.store';
export { RelayEngine } from './engine/relay.engine';
export type { RelayEngineOptions } from './engine/relay.engine';
