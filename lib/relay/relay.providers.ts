import type { Provider } from '@nestjs/common';
import { OUTBOX_PUBLISHER, OUTBOX_RELAY_OPTIONS } from '../common/outbox.constants';
import { KafkaPublisher } from '../publisher/kafka/kafka.publisher';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import { OutboxRelay } from './outbox.relay';
import { OutboxRelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';
import { RelayScheduling } from './relay.scheduling';

/** The relay's publisher: `relay.publisher` if given, else a `KafkaPublisher`; null without a relay. */
export function createOutboxPublisher(relay: ResolvedRelayOptions | false): OutboxPublisher | null {
  if (relay === false) return null;
  if (relay.publisher) return relay.publisher;
  if (!relay.kafka) return null;
  return new KafkaPublisher({
    ...relay.kafka,
    topic: relay.topic,
    topicPrefix: relay.topicPrefix,
    source: relay.source,
    allowAutoTopicCreation: relay.allowAutoTopicCreation,
  });
}

/** Providers `OutboxModule` registers for the relay (owned by lib/relay). */
export const RELAY_PROVIDERS: Provider[] = [
  {
    provide: OUTBOX_PUBLISHER,
    useFactory: createOutboxPublisher,
    inject: [OUTBOX_RELAY_OPTIONS],
  },
  OutboxRelayMetrics,
  RelayScheduling,
  OutboxRelay,
];
/** Of those, the ones the module exports (e.g. the relay and its metrics service). */
export const RELAY_EXPORTS: Provider[] = [OutboxRelay, OutboxRelayMetrics];
