import type { KafkaConnectionOptions } from '../publisher/kafka/kafka.publisher';
import type { CloudEventSource } from '../publisher/kafka-message.mapper';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { TopicRouter } from '../publisher/topic-name';

/** Retry delays of an event the broker did not accept: `min(maxMs, initialMs * 2^(attempts-1))`, +/- jitter. */
export interface RelayBackoffOptions {
  /** First retry delay, ms. Default 500. */
  initialMs?: number;
  /** Largest retry delay, ms. Default 60 000. */
  maxMs?: number;
  /** Random spread, a fraction of the delay in [0, 1]: 0.2 means +/- 20 %. Default 0.2. */
  jitter?: number;
}

/** When the resume token is written (whichever comes first, and only up to what the broker acknowledged). */
export interface RelayCheckpointOptions {
  /** After this many acknowledged change events. Default 1000. */
  events?: number;
  /** After this many ms with something new to save. Default 1000. */
  ms?: number;
}

/** One active relay among the app's instances: a lease document with expiry and fencing number. */
export interface RelayLeaseOptions {
  /** Default true. With false, every instance publishes (duplicates, no ordering across instances). */
  enabled?: boolean;
  /** How long a lease lasts without renewal; another instance takes over after that. Default 15 000 ms. */
  durationMs?: number;
  /** How often the leader renews, and followers try to acquire. Must be < durationMs / 2. Default 5 000 ms. */
  renewMs?: number;
}

/** Options of the relay (`OutboxModule.forRoot({ relay: {...} })`). `relay: false` disables it. */
export interface RelayOptions {
  /** Start the relay in `onApplicationBootstrap`. Default true. With false, call `OutboxRelay.start()`. */
  autoStart?: boolean;
  /** The default Kafka publisher's connection. Required unless `publisher` is given. */
  kafka?: KafkaConnectionOptions;
  /** A publisher of your own (then `kafka`, `topic`, `topicPrefix`, `source`, `allowAutoTopicCreation` are unused). */
  publisher?: OutboxPublisher;
  /** Topic of an event. Default `${topicPrefix}${aggregateType}`. Names are validated on every event. */
  topic?: TopicRouter;
  /** Prefix of the default topic. Default '' (topic = aggregateType, e.g. `Order`). */
  topicPrefix?: string;
  /** `ce_source` header: a string or a function of the event. Default the event's aggregateType. */
  source?: CloudEventSource;
  /** Let the broker create topics it does not know. Default false: an unknown topic dead-letters the event. */
  allowAutoTopicCreation?: boolean;
  /** Most events per publish call and per database page. Default 500. */
  batchSize?: number;
  /**
   * Most bytes (keys, values and headers) per publish call; one larger event goes alone. Keeps
   * each produce request under the broker's `message.max.bytes` (1 MiB by default). Default 1 000 000.
   */
  maxBatchBytes?: number;
  /** Most events the relay holds in memory (queued + being published); bounds memory under backlog. Default 5 000. */
  maxInFlight?: number;
  /**
   * Most memory the relay holds for in-flight events (queued + being published): each counts what
   * it costs in memory (its decoded document, its Kafka message, the relay's bookkeeping:
   * about 2.5 kB + twice its size on the wire), not its size on the wire. See docs/relay.md on how
   * reads are sized. Default 32 MiB.
   */
  maxInFlightBytes?: number;
  /** Publish attempts of an event before it moves to the dead-letter collection. Default 10. */
  maxAttempts?: number;
  backoff?: RelayBackoffOptions;
  /** How often the collection is swept for events still pending (and gauges refreshed). Default 10 000 ms. */
  sweepIntervalMs?: number;
  /** The sweep only takes events pending for longer than this (the change stream's job before). Default 30 000 ms. */
  sweepGraceMs?: number;
  checkpointEvery?: RelayCheckpointOptions;
  lease?: RelayLeaseOptions;
  /** Published events are deleted by a TTL index this long after `publishedAt`. Pending ones never. Default 7 days. */
  retentionSeconds?: number;
  /** Longest wait of one change-stream read (`maxAwaitTimeMS`); also the latency of noticing a stop. Default 1 000 ms. */
  idleMs?: number;
  /** Longest time `stop()` (and app shutdown) waits for in-flight publishes before abandoning them (they stay pending). Default 10 000 ms. */
  shutdownTimeoutMs?: number;
  /** Name of this relay's checkpoint and lease documents (run several relays on one database). Default `default`. */
  name?: string;
  /**
   * How many partitions the outbox is split into (by a hash of aggregateType and aggregateId),
   * each with its own lease, fencing number and checkpoint, spread over the app's instances.
   * Default 1: one relay instance publishes, the others wait (single leader). Every instance
   * must use the same number; after a change, instances with the new number take over once
   * every lease of the old layout has ended. Needs `maxInFlight >= partitions x batchSize`.
   */
  partitions?: number;
}

/** The relay's slice of the resolved options (token `OUTBOX_RELAY_OPTIONS`, `false` without a relay). */
export type ResolvedRelayOptions = Required<Omit<RelayOptions, OptionalAfterResolve | Nested>> &
  Pick<RelayOptions, OptionalAfterResolve> & {
    /** Publish calls in flight at once (derived: 1 with kafkajs' idempotent producer, else up to 4). */
    publishConcurrency: number;
    backoff: Required<RelayBackoffOptions>;
    checkpointEvery: Required<RelayCheckpointOptions>;
    lease: Required<RelayLeaseOptions>;
  };

type OptionalAfterResolve = 'kafka' | 'publisher' | 'topic' | 'source';
type Nested = 'backoff' | 'checkpointEvery' | 'lease';
