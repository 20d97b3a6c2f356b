import type { ConsumerOptions } from '../consumer/consumer.options';
import type { RelayOptions } from '../relay/relay.options';

/** Collection names used by the library. Every name can be changed; defaults in `outbox.defaults.ts`. */
export interface OutboxCollections {
  /** The outbox itself. Default `outbox`. */
  outbox?: string;
  /** Events the relay gave up on, with their error history. Default `outbox_dead_letters`. */
  deadLetters?: string;
  /** Relay checkpoints (resume tokens) and the leader lease. Default `outbox_relay_state`. */
  relayState?: string;
  /** `(consumer, eventId)` records of `@IdempotentHandler`. Default `outbox_processed_events`. */
  processedEvents?: string;
  /** Messages a consumer gave up on. Default `outbox_consumer_dead_letters`. */
  consumerDeadLetters?: string;
}

/** Options of `OutboxModule.forRoot()` / `forRootAsync()`. Unknown keys fail bootstrap. */
export interface OutboxModuleOptions {
  /** Name of the `@nestjs/mongoose` connection to reuse. Default: the default connection. */
  connectionName?: string;
  collections?: OutboxCollections;
  /**
   * Largest accepted payload, in bytes of its JSON encoding. Default 900 000
   * (below Kafka's default 1 MB `message.max.bytes`, leaving room for headers).
   */
  maxPayloadBytes?: number;
  /** Convert `bigint` payload values to decimal strings instead of rejecting them. Default false. */
  allowBigInt?: boolean;
  /** Create the library's indexes at bootstrap. Default true. */
  createIndexes?: boolean;
  /** The relay (change stream to Kafka). `false` for an app that only writes events. */
  relay?: RelayOptions | false;
  /** Defaults for `@IdempotentHandler` consumers. */
  consumer?: ConsumerOptions;
}
