export { OUTBOX_CHANNELS } from './diagnostic-channels';
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
} from './diagnostic-channels';
