export { OutboxHealthIndicator } from './outbox-health.indicator';
export { OutboxHealthCheckError } from './outbox-health-check.error';
export type {
  CheckpointReport,
  OutboxHealthOptions,
  OutboxHealthReport,
  PartitionHealth,
  PartitionsReport,
  ScheduledHealth,
} from './outbox-health.report';
export type { OplogWindow } from './oplog-window.probe';
