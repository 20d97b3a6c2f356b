import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import type { KafkaConnectionOptions } from '../publisher/kafka/kafka.publisher';
import type { CloudEventSource } from '../publisher/kafka-message.mapper';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import { topicNameProblem } from '../publisher/topic-name';
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
  /** Most bytes of events the relay holds in memory (see the README on how reads are sized). Default 32 MiB. */
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

export interface ResolvedRelayOptions {
  autoStart: boolean;
  kafka?: KafkaConnectionOptions;
  publisher?: OutboxPublisher;
  topic?: TopicRouter;
  topicPrefix: string;
  source?: CloudEventSource;
  allowAutoTopicCreation: boolean;
  batchSize: number;
  maxBatchBytes: number;
  maxInFlight: number;
  maxInFlightBytes: number;
  /** Publish calls in flight at once (derived: 1 with kafkajs' idempotent producer, else up to 4). */
  publishConcurrency: number;
  maxAttempts: number;
  backoff: Required<RelayBackoffOptions>;
  sweepIntervalMs: number;
  sweepGraceMs: number;
  checkpointEvery: Required<RelayCheckpointOptions>;
  lease: Required<RelayLeaseOptions>;
  retentionSeconds: number;
  idleMs: number;
  shutdownTimeoutMs: number;
  name: string;
  partitions: number;
}

/** Most relay partitions (each needs its lease, checkpoint and change stream). */
export const MAX_RELAY_PARTITIONS = 256;

export const RELAY_DEFAULTS = {
  autoStart: true,
  topicPrefix: '',
  allowAutoTopicCreation: false,
  batchSize: 500,
  maxBatchBytes: 1_000_000,
  maxInFlight: 5000,
  maxInFlightBytes: 32 * 1024 * 1024,
  maxAttempts: 10,
  backoff: { initialMs: 500, maxMs: 60_000, jitter: 0.2 },
  sweepIntervalMs: 10_000,
  sweepGraceMs: 30_000,
  checkpointEvery: { events: 1000, ms: 1000 },
  lease: { enabled: true, durationMs: 15_000, renewMs: 5_000 },
  retentionSeconds: 7 * 24 * 3600,
  idleMs: 1000,
  shutdownTimeoutMs: 10_000,
  name: 'default',
  partitions: 1,
} as const;

const KNOWN_KEYS = new Set([
  'autoStart',
  'kafka',
  'publisher',
  'topic',
  'topicPrefix',
  'source',
  'allowAutoTopicCreation',
  'batchSize',
  'maxBatchBytes',
  'maxInFlight',
  'maxInFlightBytes',
  'maxAttempts',
  'backoff',
  'sweepIntervalMs',
  'sweepGraceMs',
  'checkpointEvery',
  'lease',
  'retentionSeconds',
  'idleMs',
  'shutdownTimeoutMs',
  'name',
  'partitions',
]);
const KAFKA_KEYS = new Set([
  'brokers',
  'clientId',
  'ssl',
  'sasl',
  'connectionTimeout',
  'requestTimeout',
  'retry',
  'idempotent',
  'compression',
]);

function fail(key: string, problem: string, fix: string): never {
  throw new OutboxOptionsError(`relay.${key}`, problem, fix);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function int(key: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(
      key,
      `must be an integer from ${min} to ${max}, got ${show(value)}`,
      `Default: ${fallback}.`,
    );
  }
  return value;
}

function bool(key: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    fail(key, `must be true or false, got ${show(value)}`, `Default: ${fallback}.`);
  return value;
}

function object<T>(key: string, value: unknown, known: Set<string>): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail(key, `must be an object, got ${show(value)}`, 'Pass an object or leave it out.');
  }
  for (const name of Object.keys(value)) {
    if (!known.has(name)) {
      fail(
        key ? `${key}.${name}` : name,
        'is not a known option',
        `Known: ${[...known].join(', ')}.`,
      );
    }
  }
  return value as Partial<T>;
}

function resolveKafka(value: unknown): KafkaConnectionOptions | undefined {
  if (value === undefined) return undefined;
  const kafka = object<KafkaConnectionOptions>('kafka', value, KAFKA_KEYS);
  const brokers = kafka.brokers;
  if (
    !Array.isArray(brokers) ||
    brokers.length === 0 ||
    brokers.some((broker) => typeof broker !== 'string' || !/^[^\s:]+:\d{1,5}$/.test(broker))
  ) {
    fail(
      'kafka.brokers',
      `must be a non-empty array of "host:port" strings, got ${show(brokers)}`,
      'e.g. brokers: ["127.0.0.1:9092"].',
    );
  }
  if (
    kafka.clientId !== undefined &&
    (typeof kafka.clientId !== 'string' || kafka.clientId === '')
  ) {
    fail(
      'kafka.clientId',
      `must be a non-empty string, got ${show(kafka.clientId)}`,
      'Or leave it out.',
    );
  }
  int('kafka.connectionTimeout', kafka.connectionTimeout, 1000, 1, 600_000);
  int('kafka.requestTimeout', kafka.requestTimeout, 30_000, 1, 600_000);
  bool('kafka.idempotent', kafka.idempotent, false);
  if (
    kafka.compression !== undefined &&
    kafka.compression !== 'none' &&
    kafka.compression !== 'gzip'
  ) {
    fail(
      'kafka.compression',
      `must be "none" or "gzip", got ${show(kafka.compression)}`,
      'Default: "none".',
    );
  }
  if (kafka.retry !== undefined && (kafka.retry === null || typeof kafka.retry !== 'object')) {
    fail(
      'kafka.retry',
      `must be a kafkajs RetryOptions object, got ${show(kafka.retry)}`,
      'Or leave it out.',
    );
  }
  return { ...kafka, brokers: [...brokers] } as KafkaConnectionOptions;
}

function isPublisher(value: unknown): value is OutboxPublisher {
  const candidate = value as Partial<OutboxPublisher> | null;
  return (
    candidate !== null &&
    typeof candidate === 'object' &&
    typeof candidate.connect === 'function' &&
    typeof candidate.publish === 'function' &&
    typeof candidate.disconnect === 'function'
  );
}

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` naming the option
 * (`relay.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveRelayOptions(raw: RelayOptions | undefined): ResolvedRelayOptions {
  const options = object<RelayOptions>('', raw ?? {}, KNOWN_KEYS);
  const kafka = resolveKafka(options.kafka);
  if (options.publisher !== undefined && !isPublisher(options.publisher)) {
    fail(
      'publisher',
      'must implement OutboxPublisher (connect, publish, disconnect)',
      'Or use relay.kafka.',
    );
  }
  if (!kafka && !options.publisher) {
    fail(
      'kafka',
      'is required: the relay needs a broker to publish to',
      'Set relay.kafka.brokers (e.g. ["127.0.0.1:9092"]), give relay.publisher, or set relay: false for an app that only writes events.',
    );
  }
  if (options.topic !== undefined && typeof options.topic !== 'function') {
    fail(
      'topic',
      `must be a function (event) => topic name, got ${show(options.topic)}`,
      'Or use relay.topicPrefix.',
    );
  }
  const topicPrefix = options.topicPrefix ?? RELAY_DEFAULTS.topicPrefix;
  if (
    typeof topicPrefix !== 'string' ||
    (topicPrefix !== '' && topicNameProblem(`${topicPrefix}x`))
  ) {
    fail(
      'topicPrefix',
      `must be a string of [a-zA-Z0-9._-], got ${show(topicPrefix)}`,
      'e.g. "events.".',
    );
  }
  if (
    options.source !== undefined &&
    typeof options.source !== 'function' &&
    (typeof options.source !== 'string' || options.source === '')
  ) {
    fail(
      'source',
      `must be a non-empty string or a function, got ${show(options.source)}`,
      'e.g. "/orders-service".',
    );
  }
  const backoffRaw = object<RelayBackoffOptions>(
    'backoff',
    options.backoff,
    new Set(['initialMs', 'maxMs', 'jitter']),
  );
  const backoff = {
    initialMs: int(
      'backoff.initialMs',
      backoffRaw.initialMs,
      RELAY_DEFAULTS.backoff.initialMs,
      1,
      3_600_000,
    ),
    maxMs: int('backoff.maxMs', backoffRaw.maxMs, RELAY_DEFAULTS.backoff.maxMs, 1, 86_400_000),
    jitter: backoffRaw.jitter ?? RELAY_DEFAULTS.backoff.jitter,
  };
  if (typeof backoff.jitter !== 'number' || !(backoff.jitter >= 0 && backoff.jitter <= 1)) {
    fail(
      'backoff.jitter',
      `must be a number from 0 to 1, got ${show(backoff.jitter)}`,
      'Default: 0.2.',
    );
  }
  if (backoff.maxMs < backoff.initialMs) {
    fail(
      'backoff.maxMs',
      `(${backoff.maxMs}) is below backoff.initialMs (${backoff.initialMs})`,
      'Raise maxMs.',
    );
  }
  const checkpointRaw = object<RelayCheckpointOptions>(
    'checkpointEvery',
    options.checkpointEvery,
    new Set(['events', 'ms']),
  );
  const checkpointEvery = {
    events: int(
      'checkpointEvery.events',
      checkpointRaw.events,
      RELAY_DEFAULTS.checkpointEvery.events,
      1,
      1_000_000,
    ),
    ms: int(
      'checkpointEvery.ms',
      checkpointRaw.ms,
      RELAY_DEFAULTS.checkpointEvery.ms,
      1,
      3_600_000,
    ),
  };
  const leaseRaw = object<RelayLeaseOptions>(
    'lease',
    options.lease,
    new Set(['enabled', 'durationMs', 'renewMs']),
  );
  const lease = {
    enabled: bool('lease.enabled', leaseRaw.enabled, RELAY_DEFAULTS.lease.enabled),
    durationMs: int(
      'lease.durationMs',
      leaseRaw.durationMs,
      RELAY_DEFAULTS.lease.durationMs,
      100,
      3_600_000,
    ),
    renewMs: int('lease.renewMs', leaseRaw.renewMs, RELAY_DEFAULTS.lease.renewMs, 10, 3_600_000),
  };
  if (lease.renewMs * 2 > lease.durationMs) {
    fail(
      'lease.renewMs',
      `(${lease.renewMs}) must be at most half of lease.durationMs (${lease.durationMs})`,
      'A leader must be able to miss one renewal without losing the lease.',
    );
  }
  const batchSize = int('batchSize', options.batchSize, RELAY_DEFAULTS.batchSize, 1, 10_000);
  const maxInFlight = int(
    'maxInFlight',
    options.maxInFlight,
    RELAY_DEFAULTS.maxInFlight,
    1,
    1_000_000,
  );
  if (maxInFlight < batchSize) {
    fail(
      'maxInFlight',
      `(${maxInFlight}) is below relay.batchSize (${batchSize})`,
      'Raise maxInFlight or lower batchSize.',
    );
  }
  const maxBatchBytes = int(
    'maxBatchBytes',
    options.maxBatchBytes,
    RELAY_DEFAULTS.maxBatchBytes,
    1024,
    256 * 1024 * 1024,
  );
  const maxInFlightBytes = int(
    'maxInFlightBytes',
    options.maxInFlightBytes,
    RELAY_DEFAULTS.maxInFlightBytes,
    1024,
    16 * 1024 * 1024 * 1024,
  );
  if (maxInFlightBytes < maxBatchBytes) {
    fail(
      'maxInFlightBytes',
      `(${maxInFlightBytes}) is below relay.maxBatchBytes (${maxBatchBytes})`,
      'Raise maxInFlightBytes or lower maxBatchBytes.',
    );
  }
  const partitions = int(
    'partitions',
    options.partitions,
    RELAY_DEFAULTS.partitions,
    1,
    MAX_RELAY_PARTITIONS,
  );
  if (partitions > 1 && !lease.enabled) {
    fail(
      'partitions',
      `(${partitions}) needs relay.lease.enabled (each partition is leased)`,
      'Enable the lease or use partitions: 1.',
    );
  }
  if (maxInFlight < partitions * batchSize) {
    fail(
      'maxInFlight',
      `(${maxInFlight}) is below relay.partitions x relay.batchSize (${partitions} x ${batchSize})`,
      'One instance may own every partition and each needs room for a batch: raise maxInFlight or lower batchSize.',
    );
  }
  if (maxInFlightBytes < partitions * maxBatchBytes) {
    fail(
      'maxInFlightBytes',
      `(${maxInFlightBytes}) is below relay.partitions x relay.maxBatchBytes (${partitions} x ${maxBatchBytes})`,
      'Raise maxInFlightBytes or lower maxBatchBytes.',
    );
  }
  const idempotent = kafka?.idempotent === true && !options.publisher;
  const name = options.name ?? RELAY_DEFAULTS.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
    fail(
      'name',
      `must be 1 to 100 characters of [A-Za-z0-9._-], got ${show(name)}`,
      'Default: "default".',
    );
  }
  return {
    autoStart: bool('autoStart', options.autoStart, RELAY_DEFAULTS.autoStart),
    kafka,
    publisher: options.publisher,
    topic: options.topic,
    topicPrefix,
    source: options.source,
    allowAutoTopicCreation: bool(
      'allowAutoTopicCreation',
      options.allowAutoTopicCreation,
      RELAY_DEFAULTS.allowAutoTopicCreation,
    ),
    batchSize,
    maxBatchBytes,
    maxInFlight,
    maxInFlightBytes,
    publishConcurrency: idempotent
      ? 1
      : Math.min(4, Math.max(1, Math.floor(maxInFlight / batchSize))),
    maxAttempts: int('maxAttempts', options.maxAttempts, RELAY_DEFAULTS.maxAttempts, 1, 1000),
    backoff,
    sweepIntervalMs: int(
      'sweepIntervalMs',
      options.sweepIntervalMs,
      RELAY_DEFAULTS.sweepIntervalMs,
      10,
      86_400_000,
    ),
    sweepGraceMs: int(
      'sweepGraceMs',
      options.sweepGraceMs,
      RELAY_DEFAULTS.sweepGraceMs,
      0,
      86_400_000,
    ),
    checkpointEvery,
    lease,
    retentionSeconds: int(
      'retentionSeconds',
      options.retentionSeconds,
      RELAY_DEFAULTS.retentionSeconds,
      1,
      10 * 365 * 86_400,
    ),
    idleMs: int('idleMs', options.idleMs, RELAY_DEFAULTS.idleMs, 10, 60_000),
    shutdownTimeoutMs: int(
      'shutdownTimeoutMs',
      options.shutdownTimeoutMs,
      RELAY_DEFAULTS.shutdownTimeoutMs,
      0,
      600_000,
    ),
    name,
    partitions,
  };
}
