import { OutboxOptionsError } from '../../common/errors/outbox-options.error';
import { DEFAULT_RETRY, DEFAULT_SEND_TIMEOUT } from './kafka-publisher.options';
import type { KafkaConnectionOptions } from './kafka-publisher.options';
import type { KafkaClientName } from './kafka.sender';

/**
 * `relay.kafka.retry` as both clients get it: the fields left out take these values, never a
 * client's own defaults (kafkajs' differ under `NODE_ENV=test`: `retry/defaults.test.js`).
 */
export const RETRY_DEFAULTS = { ...DEFAULT_RETRY, factor: 0.2, multiplier: 2 } as const;
/** ms, both clients (kafkajs' default; platformatic's own is 5000). */
export const DEFAULT_CONNECTION_TIMEOUT = 1000;
/** ms, both clients (both clients' default). */
export const DEFAULT_REQUEST_TIMEOUT = 30_000;
/**
 * ms the broker may wait for the in-sync replicas of a produce request (`acks: -1`) before it
 * answers REQUEST_TIMED_OUT: kafkajs' default, given to platformatic too (its own is 5000).
 */
export const PRODUCE_TIMEOUT = 30_000;

/** One client's side of an option. */
export interface ClientRule {
  /** How the option reaches the client: its field and value (a cell of the docs' table). */
  maps: string;
  /** A value the client cannot honour, refused at bootstrap. */
  refuses?: {
    /** The values refused (the docs' words). */
    when: string;
    /** What the client would do with them, and where its source says so. */
    why: string;
    /** The problem with `kafka`, or undefined when the client honours it. */
    problem(kafka: KafkaConnectionOptions): string | undefined;
    fix: string;
  };
}

/** What a `relay.kafka` option means, the same with both clients, and how each client gets it. */
export interface KafkaOptionRule {
  /** The option under `relay.kafka.`; in parentheses, a setting that is not an option. */
  option: string;
  means: string;
  kafkajs: ClientRule;
  platformatic: ClientRule;
}

const retries = (kafka: KafkaConnectionOptions) => kafka.retry?.retries ?? RETRY_DEFAULTS.retries;

/**
 * The facts "option x client", one source for the bootstrap's refusals (`kafkaClientRefusal`),
 * the clients' option mappings (`kafkajsClientConfig`, `platformaticProducerOptions`) and the
 * table of docs/configuration.md (a spec renders it from here and compares).
 */
export const KAFKA_OPTION_RULES: readonly KafkaOptionRule[] = [
  {
    option: 'brokers',
    means: 'bootstrap brokers, `host:port`',
    kafkajs: { maps: '`brokers`' },
    platformatic: { maps: '`bootstrapBrokers`' },
  },
  {
    option: 'clientId',
    means: 'the client id the brokers see; default `nestjs-outbox-relay`',
    kafkajs: { maps: '`clientId`' },
    platformatic: {
      maps: '`clientId`',
      refuses: {
        when: 'a client id with white space',
        why: 'its options schema refuses it when the producer is made: `idProperty`, `^\\S+$`, dist/clients/base/options.js',
        problem: (kafka) =>
          kafka.clientId !== undefined && /\s/.test(kafka.clientId)
            ? `${JSON.stringify(kafka.clientId)} has white space`
            : undefined,
        fix: 'Use a client id without spaces, or relay.kafka.client: "kafkajs".',
      },
    },
  },
  {
    option: 'ssl',
    means: 'TLS: `true` or Node.js `tls.connect` options; SNI is the broker host',
    kafkajs: { maps: '`ssl` (it sets `servername` to a broker host name itself)' },
    platformatic: {
      maps: '`tls` (`true`: `{}`), and `tlsServerName`: the broker host, or `ssl.servername`',
    },
  },
  {
    option: 'sasl',
    means: 'SASL authentication',
    kafkajs: {
      maps: '`sasl`: plain, scram-sha-256, scram-sha-512, aws, oauthbearer, or a mechanism with its `authenticationProvider`',
    },
    platformatic: {
      maps: '`sasl`: `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` with `username` and `password`',
      refuses: {
        when: 'any other mechanism',
        why: "it has no AWS mechanism, and its OAUTHBEARER takes a token, not kafkajs' `oauthBearerProvider`: `SASLMechanisms`, dist/apis/enumerations.js",
        problem: (kafka) => {
          const mechanism = kafka.sasl?.mechanism;
          if (mechanism === undefined) return undefined;
          return ['plain', 'scram-sha-256', 'scram-sha-512'].includes(mechanism)
            ? undefined
            : `mechanism ${JSON.stringify(mechanism)} is not supported`;
        },
        fix: 'Use plain, scram-sha-256 or scram-sha-512 (with username and password), or relay.kafka.client: "kafkajs".',
      },
    },
  },
  {
    option: 'connectionTimeout',
    means: `ms to open a connection; default ${DEFAULT_CONNECTION_TIMEOUT}`,
    kafkajs: { maps: '`connectionTimeout`' },
    platformatic: { maps: '`connectTimeout` (its own default 5000 is not used)' },
  },
  {
    option: 'requestTimeout',
    means: `ms the client waits for one answer; default ${DEFAULT_REQUEST_TIMEOUT}`,
    kafkajs: { maps: '`requestTimeout` (`enforceRequestTimeout` is on)' },
    platformatic: { maps: '`requestTimeout` (read by each connection)' },
  },
  {
    option: '(produce timeout)',
    means: `ms the broker waits for the in-sync replicas before it answers REQUEST_TIMED_OUT: ${PRODUCE_TIMEOUT}, not an option`,
    kafkajs: { maps: "the produce request's `timeout` (its default, src/broker/index.js)" },
    platformatic: { maps: '`timeout` (its own default 5000 is not used)' },
  },
  {
    option: 'sendTimeout',
    means: `ms the relay gives one send, the client's retries included; default ${DEFAULT_SEND_TIMEOUT}, at least \`requestTimeout\``,
    kafkajs: { maps: "the relay's own deadline (no kafkajs option)" },
    platformatic: { maps: "the relay's own deadline (no platformatic option)" },
  },
  {
    option: 'retry.retries',
    means: `retries of a request after its first attempt; default ${RETRY_DEFAULTS.retries}`,
    kafkajs: {
      maps: '`retry.retries`',
      refuses: {
        when: '0 with `idempotent: true`',
        why: 'it throws KafkaJSNonRetriableError when the producer is made, an endless "broker unavailable": src/producer/index.js',
        problem: (kafka) =>
          kafka.idempotent === true && retries(kafka) < 1
            ? `is ${retries(kafka)} with relay.kafka.idempotent: true`
            : undefined,
        fix: 'Set retry.retries to 1 or more, or idempotent: false.',
      },
    },
    platformatic: {
      maps: '`retries`',
      refuses: {
        when: '0 or 1 with `idempotent: true`',
        why: 'its producer raises them to Number.MAX_SAFE_INTEGER, so a send never settles: the `Producer` constructor, dist/clients/producer/producer.js',
        problem: (kafka) =>
          kafka.idempotent === true && retries(kafka) <= 1
            ? `is ${retries(kafka)} with relay.kafka.idempotent: true`
            : undefined,
        fix: 'Set retry.retries to 2 or more, or idempotent: false.',
      },
    },
  },
  {
    option: 'retry.initialRetryTime',
    means: `ms before the first retry (randomized by \`factor\`); default ${RETRY_DEFAULTS.initialRetryTime}`,
    kafkajs: { maps: '`retry.initialRetryTime`' },
    platformatic: { maps: "`retryDelay`: a function computing kafkajs' schedule" },
  },
  {
    option: 'retry.maxRetryTime',
    means: `longest ms between two retries; default ${RETRY_DEFAULTS.maxRetryTime}`,
    kafkajs: { maps: '`retry.maxRetryTime`' },
    platformatic: { maps: '`retryDelay` (as above)' },
  },
  {
    option: 'retry.factor',
    means: `randomization of each delay, from 0 to 1; default ${RETRY_DEFAULTS.factor}`,
    kafkajs: { maps: '`retry.factor`' },
    platformatic: { maps: '`retryDelay` (as above)' },
  },
  {
    option: 'retry.multiplier',
    means: `growth of the delay from one retry to the next; default ${RETRY_DEFAULTS.multiplier}`,
    kafkajs: { maps: '`retry.multiplier`' },
    platformatic: { maps: '`retryDelay` (as above)' },
  },
  {
    option: 'retry.restartOnFailure',
    means: 'a kafkajs consumer option: the relay only produces',
    kafkajs: {
      maps: '(none)',
      refuses: {
        when: 'any value',
        why: 'only its consumer reads it: src/consumer/index.js',
        problem: (kafka) => (kafka.retry?.restartOnFailure !== undefined ? 'is set' : undefined),
        fix: 'Leave it out: a failed send is retried by the relay.',
      },
    },
    platformatic: {
      maps: '(none)',
      refuses: {
        when: 'any value',
        why: 'it has no such option',
        problem: (kafka) => (kafka.retry?.restartOnFailure !== undefined ? 'is set' : undefined),
        fix: 'Leave it out: a failed send is retried by the relay.',
      },
    },
  },
  {
    option: 'idempotent',
    means:
      "broker-side dedupe of the client's retries, `acks: -1`; the relay sends one request at a time and replaces the producer after a failed send ([why](relay.md#what-each-client-guarantees)); default false",
    kafkajs: { maps: '`idempotent`, `maxInFlightRequests: 1`' },
    platformatic: { maps: '`idempotent` (its producer then keeps one request in flight)' },
  },
  {
    option: 'compression',
    means: '`none` or `gzip`; default `none`',
    kafkajs: { maps: '`CompressionTypes.None` or `.GZIP`' },
    platformatic: { maps: "`compression`: `'none'` or `'gzip'`" },
  },
];

/** An option `client` cannot honour: what `OutboxOptionsError` says. */
export interface KafkaClientRefusal {
  /** The full option path, e.g. `relay.kafka.retry.retries`. */
  option: string;
  problem: string;
  fix: string;
}

/** The first option of `kafka` its client cannot honour (see `KAFKA_OPTION_RULES`); none: undefined. */
export function kafkaClientRefusal(
  kafka: KafkaConnectionOptions,
  client: KafkaClientName = kafka.client ?? 'kafkajs',
): KafkaClientRefusal | undefined {
  for (const rule of KAFKA_OPTION_RULES) {
    const refuses = rule[client].refuses;
    const problem = refuses?.problem(kafka);
    if (refuses === undefined || problem === undefined) continue;
    return {
      option: `relay.kafka.${rule.option}`,
      problem: `${problem}, which relay.kafka.client "${client}" cannot honour (${refuses.why})`,
      fix: refuses.fix,
    };
  }
  return undefined;
}

/**
 * Throws `OutboxOptionsError` for an option `client` cannot honour: the bootstrap refuses them
 * first; this stops a publisher made without the module (`new KafkaPublisher(...)`).
 */
export function assertKafkaClientHonours(
  kafka: KafkaConnectionOptions,
  client: KafkaClientName,
): void {
  const refusal = kafkaClientRefusal(kafka, client);
  if (refusal) throw new OutboxOptionsError(refusal.option, refusal.problem, refusal.fix);
}

/** `relay.kafka.retry` with every field both clients read (`restartOnFailure` is refused). */
export interface ResolvedRetry {
  retries: number;
  initialRetryTime: number;
  maxRetryTime: number;
  factor: number;
  multiplier: number;
}

/** `relay.kafka.retry` over `RETRY_DEFAULTS`, the same for both clients. */
export function resolvedRetry(kafka: KafkaConnectionOptions): ResolvedRetry {
  const given = kafka.retry ?? {};
  return {
    retries: given.retries ?? RETRY_DEFAULTS.retries,
    initialRetryTime: given.initialRetryTime ?? RETRY_DEFAULTS.initialRetryTime,
    maxRetryTime: given.maxRetryTime ?? RETRY_DEFAULTS.maxRetryTime,
    factor: given.factor ?? RETRY_DEFAULTS.factor,
    multiplier: given.multiplier ?? RETRY_DEFAULTS.multiplier,
  };
}
