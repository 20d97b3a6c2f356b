import {
  isOptionObject,
  OptionChecker,
  showOption,
  type OptionKeys,
} from '../common/options/option.checker';
import type { KafkaConnectionOptions } from '../publisher/kafka/kafka.publisher';
import {
  DEFAULT_CONNECTION_TIMEOUT,
  DEFAULT_REQUEST_TIMEOUT,
  kafkaClientRefusal,
  RETRY_DEFAULTS,
} from '../publisher/kafka/kafka-client.rules';
import { DEFAULT_SEND_TIMEOUT } from '../publisher/kafka/kafka-publisher.options';

/**
 * `relay.kafka`, checked at bootstrap: each field's type and range, `sasl`'s credentials,
 * `retry`'s schedule, `sendTimeout` against `requestTimeout`, then what the chosen client cannot
 * honour (`kafkaClientRefusal`, from the option x client rules).
 */

const HOUR_MS = 3_600_000;

const KAFKA_KEYS = {
  brokers: true,
  clientId: true,
  ssl: true,
  sasl: true,
  connectionTimeout: true,
  requestTimeout: true,
  sendTimeout: true,
  retry: true,
  idempotent: true,
  compression: true,
  client: true,
} as const satisfies OptionKeys<KafkaConnectionOptions>;
const RETRY_KEYS = {
  retries: true,
  initialRetryTime: true,
  maxRetryTime: true,
  factor: true,
  multiplier: true,
  restartOnFailure: true,
} as const satisfies OptionKeys<NonNullable<KafkaConnectionOptions['retry']>>;

export function resolveKafka(
  check: OptionChecker,
  value: unknown,
): KafkaConnectionOptions | undefined {
  if (value === undefined) return undefined;
  const kafka = check.object<KafkaConnectionOptions>('kafka', value, KAFKA_KEYS);
  const at: OptionChecker = check.at('kafka');
  const brokers = kafka.brokers;
  if (
    !Array.isArray(brokers) ||
    brokers.length === 0 ||
    brokers.some((broker) => typeof broker !== 'string' || !/^[^\s:]+:\d{1,5}$/.test(broker))
  ) {
    at.fail(
      'brokers',
      `expected a non-empty array of "host:port" strings, got ${showOption(brokers)}`,
      'e.g. brokers: ["127.0.0.1:9092"].',
    );
  }
  at.text('clientId', kafka.clientId, undefined, 'Or leave it out.');
  at.durationMs('connectionTimeout', kafka.connectionTimeout, DEFAULT_CONNECTION_TIMEOUT, {
    min: 1,
    max: 600_000,
  });
  const requestTimeout = at.durationMs(
    'requestTimeout',
    kafka.requestTimeout,
    DEFAULT_REQUEST_TIMEOUT,
    { min: 1, max: 600_000 },
  );
  const sendTimeout = at.durationMs('sendTimeout', kafka.sendTimeout, DEFAULT_SEND_TIMEOUT, {
    min: 1,
    max: HOUR_MS,
  });
  if (sendTimeout < requestTimeout) {
    at.fail(
      'sendTimeout',
      `(${sendTimeout}${kafka.sendTimeout === undefined ? ', the default' : ''}) is below relay.kafka.requestTimeout (${requestTimeout}): the relay would give a send up before the client's own request could be answered`,
      'Raise sendTimeout to at least requestTimeout, or lower requestTimeout.',
    );
  }
  at.bool('idempotent', kafka.idempotent, false);
  if (kafka.compression !== undefined) {
    at.oneOf('compression', kafka.compression, ['none', 'gzip'], 'Default: "none".');
  }
  if (kafka.client !== undefined) {
    at.oneOf(
      'client',
      kafka.client,
      ['kafkajs', 'platformatic'],
      'Default: "kafkajs"; "platformatic" needs the @platformatic/kafka package installed.',
    );
  }
  if (kafka.ssl !== undefined && typeof kafka.ssl !== 'boolean' && !isOptionObject(kafka.ssl)) {
    at.fail(
      'ssl',
      `expected true, false or Node.js tls.connect options, got ${showOption(kafka.ssl)}`,
      'Or leave it out.',
    );
  }
  checkSasl(at, kafka.sasl);
  checkRetry(at, kafka.retry);
  const refusal = kafkaClientRefusal(kafka as KafkaConnectionOptions);
  if (refusal) check.fail(refusal.option.slice('relay.'.length), refusal.problem, refusal.fix);
  return { ...kafka, brokers: [...brokers] } as KafkaConnectionOptions;
}

const SASL_CREDENTIALS: Record<string, readonly string[]> = {
  plain: ['username', 'password'],
  'scram-sha-256': ['username', 'password'],
  'scram-sha-512': ['username', 'password'],
  aws: ['authorizationIdentity', 'accessKeyId', 'secretAccessKey'],
};

/**
 * kafkajs' `sasl`: a known mechanism with its credentials (a missing one would fail every
 * connection, an endless outage), or any mechanism with its own `authenticationProvider`. What
 * a client cannot honour is refused by `kafkaClientRefusal`.
 */
function checkSasl(at: OptionChecker, sasl: unknown): void {
  if (sasl === undefined) return;
  const given = isOptionObject(sasl) ? sasl : undefined;
  const mechanism = given?.mechanism;
  if (given === undefined || typeof mechanism !== 'string') {
    at.fail(
      'sasl',
      `expected { mechanism, ... }, got ${showOption(sasl)}`,
      'e.g. { mechanism: "scram-sha-512", username, password }, or leave it out.',
    );
  }
  if (typeof given.authenticationProvider === 'function') return;
  const inSasl = at.at('sasl');
  if (mechanism === 'oauthbearer') {
    inSasl.fn(
      'oauthBearerProvider',
      given.oauthBearerProvider,
      'Pass async () => ({ value: token }).',
    );
    if (given.oauthBearerProvider === undefined) {
      inSasl.fail(
        'oauthBearerProvider',
        'is required with mechanism "oauthbearer"',
        'Pass async () => ({ value: token }).',
      );
    }
    return;
  }
  const fields = SASL_CREDENTIALS[mechanism];
  if (!fields) {
    inSasl.fail(
      'mechanism',
      `expected "plain", "scram-sha-256", "scram-sha-512", "aws" or "oauthbearer", got ${showOption(mechanism)}`,
      'Or give your own authenticationProvider.',
    );
  }
  for (const field of fields) {
    inSasl.text(field, given[field] ?? '', '', `mechanism "${mechanism}" needs it.`);
  }
}

/** `retry`'s fields: what both clients can follow (see `resolvedRetry`). */
function checkRetry(at: OptionChecker, raw: unknown): void {
  const retry = at.object<NonNullable<KafkaConnectionOptions['retry']>>(
    'retry',
    raw,
    RETRY_KEYS,
    'Pass { retries, initialRetryTime, maxRetryTime, factor, multiplier }, or leave it out.',
  );
  const r = at.at('retry');
  r.int('retries', retry.retries, RETRY_DEFAULTS.retries, { min: 0 });
  const initial = r.durationMs(
    'initialRetryTime',
    retry.initialRetryTime,
    RETRY_DEFAULTS.initialRetryTime,
    {
      min: 0,
      max: HOUR_MS,
    },
  );
  const max = r.durationMs('maxRetryTime', retry.maxRetryTime, RETRY_DEFAULTS.maxRetryTime, {
    min: 0,
    max: HOUR_MS,
  });
  if (max < initial) {
    r.fail(
      'maxRetryTime',
      `(${max}) is below retry.initialRetryTime (${initial})`,
      'Raise maxRetryTime.',
    );
  }
  r.number('factor', retry.factor, RETRY_DEFAULTS.factor, 0, 1);
  r.number('multiplier', retry.multiplier, RETRY_DEFAULTS.multiplier, 1, 100);
}
