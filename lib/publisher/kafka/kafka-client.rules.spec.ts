import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutboxOptionsError } from '../../common/errors/outbox-options.error';
import { platformaticProducerOptions } from '../platformatic/platformatic-producer.options';
import { kafkajsRetryDelay } from '../platformatic/platformatic-producer.options';
import {
  DEFAULT_CONNECTION_TIMEOUT,
  DEFAULT_REQUEST_TIMEOUT,
  KAFKA_OPTION_RULES,
  PRODUCE_TIMEOUT,
  resolvedRetry,
} from './kafka-client.rules';
import type { ClientRule } from './kafka-client.rules';
import { kafkajsClientConfig } from './kafkajs-client.options';

const root = join(__dirname, '..', '..', '..');
const brokers = ['127.0.0.1:9092'];

/** A file of a client's installed sources. */
function clientSource(path: string): string {
  return readFileSync(join(root, 'node_modules', path), 'utf8');
}

describe('each relay.kafka option means the same with both clients', () => {
  it('both get the same explicit timeouts and retries, never a client default of their own', () => {
    const kafkajs = kafkajsClientConfig({ brokers });
    const platformatic = platformaticProducerOptions({ brokers });
    // Defect: platformatic connected within its own 5000 ms, kafkajs within 1000.
    expect(kafkajs.connectionTimeout).toBe(DEFAULT_CONNECTION_TIMEOUT);
    expect(platformatic.connectTimeout).toBe(DEFAULT_CONNECTION_TIMEOUT);
    expect(kafkajs.requestTimeout).toBe(DEFAULT_REQUEST_TIMEOUT);
    expect(platformatic.requestTimeout).toBe(DEFAULT_REQUEST_TIMEOUT);
    // kafkajs' retry defaults under NODE_ENV=test (factor 0.02, multiplier 1.5) are not used.
    expect(kafkajs.retry).toEqual(resolvedRetry({ brokers }));
    expect(kafkajs.retry).toEqual({
      retries: 2,
      initialRetryTime: 100,
      maxRetryTime: 1000,
      factor: 0.2,
      multiplier: 2,
    });
    expect(platformatic.retries).toBe(2);
  });

  it("the broker's produce timeout is kafkajs' default for both (platformatic's own is 5000 ms)", () => {
    // Defect: REQUEST_TIMED_OUT after 5 s under acks -1 with platformatic, where kafkajs waits 30 s.
    expect(platformaticProducerOptions({ brokers }).timeout).toBe(PRODUCE_TIMEOUT);
    expect(clientSource('kafkajs/src/broker/index.js')).toContain(`timeout = ${PRODUCE_TIMEOUT},`);
  });

  it("platformatic's retryDelay gives kafkajs' retry delays (initialRetryTime, multiplier, maxRetryTime)", async () => {
    // Defect: platformatic retried every initialRetryTime ms; maxRetryTime, factor and multiplier were ignored.
    const retry = { retries: 5, initialRetryTime: 1, maxRetryTime: 8, factor: 0.2, multiplier: 2 };
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      // kafkajs' own retrier: fn(bail, retryCount, retryTime), retryTime the wait before the next try.
      const createRetry = require('kafkajs/src/retry') as (
        options: object,
      ) => (fn: (bail: unknown, count: number, time: number) => Promise<void>) => Promise<void>;
      const kafkajsDelays: number[] = [];
      await createRetry(retry)(async (_bail, _count, time) => {
        kafkajsDelays.push(time);
        throw Object.assign(new Error('again'), { retriable: true });
      }).catch(() => undefined);
      const delay = kafkajsRetryDelay(retry, () => 0.5);
      const platformaticDelays = kafkajsDelays.map((_, count) =>
        delay({}, 'send', count + 1, retry.retries, new Error()),
      );
      expect(kafkajsDelays).toEqual([1, 2, 4, 8, 8, 8]);
      expect(platformaticDelays).toEqual(kafkajsDelays);
    } finally {
      random.mockRestore();
    }
    // Randomized by +-factor around kafkajs' values.
    const bounds = kafkajsRetryDelay(resolvedRetry({ brokers }), () => 0);
    const top = kafkajsRetryDelay(resolvedRetry({ brokers }), () => 0.999_999);
    expect([bounds({}, 'send', 1, 2, new Error()), top({}, 'send', 1, 2, new Error())]).toEqual([
      80, 120,
    ]);
    expect(top({}, 'send', 9, 9, new Error())).toBe(1000);
  });

  it('ssl: platformatic sends the broker host as SNI server name, as kafkajs does, unless ssl.servername names one', () => {
    expect(platformaticProducerOptions({ brokers, ssl: true })).toMatchObject({
      tls: {},
      tlsServerName: true,
    });
    const named = platformaticProducerOptions({ brokers, ssl: { servername: 'kafka.example' } });
    expect(named.tls).toEqual({ servername: 'kafka.example' });
    expect(named.tlsServerName).toBeUndefined();
    expect(platformaticProducerOptions({ brokers, ssl: false }).tls).toBeUndefined();
  });

  it('sasl: plain and scram become platformatic mechanisms; the others are refused when the publisher is made, too', () => {
    expect(
      platformaticProducerOptions({
        brokers,
        sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
      }).sasl,
    ).toEqual({ mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' });
    const aws = {
      mechanism: 'aws' as const,
      authorizationIdentity: 'a',
      accessKeyId: 'k',
      secretAccessKey: 's',
    };
    expect(() => platformaticProducerOptions({ brokers, sasl: aws })).toThrow(OutboxOptionsError);
    expect(kafkajsClientConfig({ brokers, sasl: aws }).sasl).toBe(aws);
  });

  it("the refusals pin what each client's installed source does", () => {
    // kafkajs: an idempotent producer with 0 retries throws when it is made.
    expect(clientSource('kafkajs/src/producer/index.js')).toContain(
      'if (idempotent && retry.retries < 1) {',
    );
    // platformatic: an idempotent producer's retries of 0 or 1 become Number.MAX_SAFE_INTEGER.
    expect(
      clientSource('@platformatic/kafka/dist/clients/producer/producer.js').replace(/\s+/g, ' '),
    ).toContain(
      "if (options.retries === undefined || (typeof options.retries === 'number' && options.retries <= 1)) { options.retries = Number.MAX_SAFE_INTEGER;",
    );
    // platformatic: no AWS mechanism; a client id is a string without white space.
    expect(clientSource('@platformatic/kafka/dist/apis/enumerations.js')).not.toContain('AWS');
    expect(clientSource('@platformatic/kafka/dist/clients/base/options.js')).toContain(
      "export const idProperty = { type: 'string', pattern: '^\\\\S+$' };",
    );
    // platformatic's own defaults, which the mapping replaces.
    expect(clientSource('@platformatic/kafka/dist/clients/base/options.js')).toMatch(
      /connectTimeout: 5000,\s+maxInflights: 5,\s+timeout: 5000,/,
    );
  });
});

/** The table of docs/configuration.md, rendered from `KAFKA_OPTION_RULES`. */
function renderKafkaOptionTable(): string {
  const cell = (rule: ClientRule) =>
    rule.refuses
      ? `${rule.maps}; **refused** at bootstrap: ${rule.refuses.when} (${rule.refuses.why})`
      : rule.maps;
  const name = (option: string) => (option.startsWith('(') ? option : `\`${option}\``);
  return [
    '| `relay.kafka.` | means (with both clients) | kafkajs | `@platformatic/kafka` |',
    '| --- | --- | --- | --- |',
    ...KAFKA_OPTION_RULES.map(
      (rule) =>
        `| ${name(rule.option)} | ${rule.means} | ${cell(rule.kafkajs)} | ${cell(rule.platformatic)} |`,
    ),
  ].join('\n');
}

describe('docs/configuration.md "relay.kafka option × client"', () => {
  it('is the table rendered from KAFKA_OPTION_RULES (one source)', () => {
    const docs = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    const heading = '### relay.kafka option × client';
    const start = docs.indexOf(heading);
    expect(start).toBeGreaterThanOrEqual(0);
    const lines = docs.slice(start).split('\n');
    const first = lines.findIndex((line) => line.startsWith('|'));
    const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
    const table = lines.slice(first, end === -1 ? undefined : end).join('\n');
    // On a difference, paste the rendered table (the expected value) into the docs.
    expect(table).toBe(renderKafkaOptionTable());
  });

  it('names every relay.kafka option but `client` itself', () => {
    const options = new Set(KAFKA_OPTION_RULES.map((rule) => rule.option.split('.')[0]));
    for (const key of [
      'brokers',
      'clientId',
      'ssl',
      'sasl',
      'connectionTimeout',
      'requestTimeout',
      'sendTimeout',
      'retry',
      'idempotent',
      'compression',
    ]) {
      expect(options).toContain(key);
    }
  });
});
