export * from './relay.options';
export { OutboxRelay } from './outbox.relay';
export * from './relay.metrics';
export type { RelayStatus, HeldDestination, StreamState, PartitionStatus } from './relay.status';
