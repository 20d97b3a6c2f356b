import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { OptionChecker, showOption } from '../common/options/option.checker';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import { topicNameProblem } from '../publisher/topic-name';
import { resolveKafka } from './relay-kafka.options';
import type {
  RelayBackoffOptions,
  RelayCheckpointOptions,
  RelayLeaseOptions,
  RelayOptions,
  ResolvedRelayOptions,
} from './relay-options.interface';

export type * from './relay-options.interface';

/** Most relay partitions (each needs its lease, checkpoint and change stream). */
export const MAX_RELAY_PARTITIONS = 256;

/** Also the known keys of the nested sections (`backoff`, `checkpointEvery`, `lease`). */
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
} as const satisfies RelayOptions;

/**
 * The known keys: those without a default, then those of the defaults. `autoStart` and
 * `topicPrefix` are listed here too only to keep the order the "not a known option" message
 * shows them in.
 */
const RELAY_KEYS: Record<keyof RelayOptions, unknown> = Object.assign(
  { autoStart: true, kafka: true, publisher: true, topic: true, topicPrefix: true, source: true },
  RELAY_DEFAULTS,
);
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

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

function resolveBackoff(check: OptionChecker, raw: unknown): Required<RelayBackoffOptions> {
  const given = check.object<RelayBackoffOptions>('backoff', raw, RELAY_DEFAULTS.backoff);
  const at = check.at('backoff');
  const defaults = RELAY_DEFAULTS.backoff;
  const backoff = {
    initialMs: at.durationMs('initialMs', given.initialMs, defaults.initialMs, {
      min: 1,
      max: HOUR_MS,
    }),
    maxMs: at.durationMs('maxMs', given.maxMs, defaults.maxMs, { min: 1, max: DAY_MS }),
    jitter: at.number('jitter', given.jitter, defaults.jitter, 0, 1),
  };
  if (backoff.maxMs < backoff.initialMs) {
    at.fail(
      'maxMs',
      `(${backoff.maxMs}) is below backoff.initialMs (${backoff.initialMs})`,
      'Raise maxMs.',
    );
  }
  return backoff;
}

function resolveLease(check: OptionChecker, raw: unknown): Required<RelayLeaseOptions> {
  const given = check.object<RelayLeaseOptions>('lease', raw, RELAY_DEFAULTS.lease);
  const at = check.at('lease');
  const defaults = RELAY_DEFAULTS.lease;
  const lease = {
    enabled: at.bool('enabled', given.enabled, defaults.enabled),
    durationMs: at.durationMs('durationMs', given.durationMs, defaults.durationMs, {
      min: 100,
      max: HOUR_MS,
    }),
    renewMs: at.durationMs('renewMs', given.renewMs, defaults.renewMs, { min: 10, max: HOUR_MS }),
  };
  if (lease.renewMs * 2 > lease.durationMs) {
    at.fail(
      'renewMs',
      `(${lease.renewMs}) must be at most half of lease.durationMs (${lease.durationMs})`,
      'A leader must be able to miss one renewal without losing the lease.',
    );
  }
  return lease;
}

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` naming the option
 * (`relay.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveRelayOptions(raw: RelayOptions | undefined): ResolvedRelayOptions {
  const check = new OptionChecker('relay.', (option, problem, fix) => {
    throw new OutboxOptionsError(option, problem, fix);
  });
  const options = check.object<RelayOptions>('', raw ?? {}, RELAY_KEYS);
  const kafka = resolveKafka(check, options.kafka);
  if (options.publisher !== undefined && !isPublisher(options.publisher)) {
    check.fail(
      'publisher',
      'must implement OutboxPublisher (connect, publish, disconnect)',
      'Or use relay.kafka.',
    );
  }
  if (!kafka && !options.publisher) {
    check.fail(
      'kafka',
      'is required: the relay needs a broker to publish to',
      'Set relay.kafka.brokers (e.g. ["127.0.0.1:9092"]), give relay.publisher, or set relay: false for an app that only writes events.',
    );
  }
  check.fn('topic', options.topic, 'Pass (event) => topic name, or use relay.topicPrefix.');
  const topicPrefix = options.topicPrefix ?? RELAY_DEFAULTS.topicPrefix;
  if (
    typeof topicPrefix !== 'string' ||
    (topicPrefix !== '' && topicNameProblem(`${topicPrefix}x`))
  ) {
    check.fail(
      'topicPrefix',
      `expected a string of [a-zA-Z0-9._-], got ${showOption(topicPrefix)}`,
      'e.g. "events.".',
    );
  }
  if (typeof options.source !== 'function') {
    check.text('source', options.source, undefined, 'e.g. "/orders-service", or a function.');
  }
  const backoff = resolveBackoff(check, options.backoff);
  const checkpointRaw = check.object<RelayCheckpointOptions>(
    'checkpointEvery',
    options.checkpointEvery,
    RELAY_DEFAULTS.checkpointEvery,
  );
  const checkpoint = check.at('checkpointEvery');
  const checkpointEvery = {
    events: checkpoint.int('events', checkpointRaw.events, RELAY_DEFAULTS.checkpointEvery.events, {
      min: 1,
      max: 1_000_000,
    }),
    ms: checkpoint.durationMs('ms', checkpointRaw.ms, RELAY_DEFAULTS.checkpointEvery.ms, {
      min: 1,
      max: HOUR_MS,
    }),
  };
  const lease = resolveLease(check, options.lease);
  const int = (key: keyof RelayOptions & keyof typeof RELAY_DEFAULTS, min: number, max: number) =>
    check.int(key, options[key], RELAY_DEFAULTS[key] as number, { min, max });
  const batchSize = int('batchSize', 1, 10_000);
  const maxInFlight = int('maxInFlight', 1, 1_000_000);
  if (maxInFlight < batchSize) {
    check.fail(
      'maxInFlight',
      `(${maxInFlight}) is below relay.batchSize (${batchSize})`,
      'Raise maxInFlight or lower batchSize.',
    );
  }
  const maxBatchBytes = int('maxBatchBytes', 1024, 256 * 1024 * 1024);
  const maxInFlightBytes = int('maxInFlightBytes', 1024, 16 * 1024 * 1024 * 1024);
  if (maxInFlightBytes < maxBatchBytes) {
    check.fail(
      'maxInFlightBytes',
      `(${maxInFlightBytes}) is below relay.maxBatchBytes (${maxBatchBytes})`,
      'Raise maxInFlightBytes or lower maxBatchBytes.',
    );
  }
  const partitions = int('partitions', 1, MAX_RELAY_PARTITIONS);
  if (partitions > 1 && !lease.enabled) {
    check.fail(
      'partitions',
      `(${partitions}) needs relay.lease.enabled (each partition is leased)`,
      'Enable the lease or use partitions: 1.',
    );
  }
  if (maxInFlight < partitions * batchSize) {
    check.fail(
      'maxInFlight',
      `(${maxInFlight}) is below relay.partitions x relay.batchSize (${partitions} x ${batchSize})`,
      'One instance may own every partition and each needs room for a batch: raise maxInFlight or lower batchSize.',
    );
  }
  if (maxInFlightBytes < partitions * maxBatchBytes) {
    check.fail(
      'maxInFlightBytes',
      `(${maxInFlightBytes}) is below relay.partitions x relay.maxBatchBytes (${partitions} x ${maxBatchBytes})`,
      'Raise maxInFlightBytes or lower maxBatchBytes.',
    );
  }
  const idempotent = kafka?.idempotent === true && !options.publisher;
  const name = options.name ?? RELAY_DEFAULTS.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
    check.fail(
      'name',
      `expected 1 to 100 characters of [A-Za-z0-9._-], got ${showOption(name)}`,
      'Default: "default".',
    );
  }
  return {
    autoStart: check.bool('autoStart', options.autoStart, RELAY_DEFAULTS.autoStart),
    kafka,
    publisher: options.publisher,
    topic: options.topic,
    topicPrefix,
    source: options.source,
    allowAutoTopicCreation: check.bool(
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
    maxAttempts: int('maxAttempts', 1, 1000),
    backoff,
    sweepIntervalMs: int('sweepIntervalMs', 10, DAY_MS),
    sweepGraceMs: int('sweepGraceMs', 0, DAY_MS),
    checkpointEvery,
    lease,
    retentionSeconds: int('retentionSeconds', 1, 10 * 365 * 86_400),
    idleMs: int('idleMs', 10, 60_000),
    shutdownTimeoutMs: int('shutdownTimeoutMs', 0, 600_000),
    name,
    partitions,
  };
}
