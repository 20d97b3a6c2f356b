import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { OutboxOptionsError } from '../../common/errors/outbox-options.error';
import type { PlatformaticKafka } from '../platformatic/platformatic-kafka.loader';
import { PlatformaticKafkaSender } from '../platformatic/platformatic-kafka.sender';
import { KafkajsSender } from './kafkajs.sender';

/** A port on 127.0.0.1 where nothing listens: every connection is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const quiet = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/**
 * What the installed clients do with an idempotent producer and few retries, against a broker
 * that refuses every connection: what `KAFKA_OPTION_RULES` refuses at bootstrap, and why.
 */
describe('idempotent with few retries, with the installed clients (no broker: a closed port)', () => {
  it('kafkajs: retries 0 throws when the producer is made; the sender refuses it when it is made', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${await closedPort()}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    expect(() => kafka.producer({ idempotent: true })).toThrow(
      expect.objectContaining({ name: 'KafkaJSNonRetriableError' }),
    );
    // Defect: that throw came out of connect(), classified broker: an endless outage.
    expect(
      () =>
        new KafkajsSender(
          { brokers: ['127.0.0.1:9'], idempotent: true, retry: { retries: 0 } },
          quiet,
        ),
    ).toThrow(OutboxOptionsError);
  });

  it('platformatic: retries 1 never settles (raised to MAX_SAFE_INTEGER), 2 rejects at once; the sender refuses 1', async () => {
    const port = await closedPort();
    // @platformatic/kafka is an ES module Jest cannot load: the probe runs in a child process.
    const probe = `
      import { Producer, stringSerializers } from '@platformatic/kafka';
      const settle = async (retries) => {
        const producer = new Producer({ clientId: 'probe', bootstrapBrokers: ['127.0.0.1:${port}'],
          idempotent: true, retries, retryDelay: 50, serializers: stringSerializers });
        const started = Date.now();
        const send = producer.send({ messages: [{ topic: 'orders', key: 'k', value: 'v' }] })
          .then(() => 'stored', () => 'rejected');
        const outcome = await Promise.race([send, new Promise((r) => setTimeout(() => r('pending'), 1500))]);
        producer.close(true, () => {});
        return { retries, outcome, ms: Date.now() - started };
      };
      console.log(JSON.stringify([await settle(1), await settle(2)]));
      process.exit(0);
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', probe],
      { cwd: join(__dirname, '..', '..', '..'), timeout: 15_000 },
    );
    const [one, two] = JSON.parse(stdout) as Array<{ outcome: string; ms: number }>;
    expect(one.outcome).toBe('pending');
    expect(two.outcome).toBe('rejected');
    expect(two.ms).toBeLessThan(1500);

    // What the sender does instead: refuses 1 when it is made (the bootstrap refuses it first).
    const fakeModule = {
      Producer: class {},
      stringSerializers: {},
    } as unknown as PlatformaticKafka;
    const brokers = [`127.0.0.1:${port}`];
    expect(
      () =>
        new PlatformaticKafkaSender(
          { brokers, idempotent: true, retry: { retries: 1 } },
          fakeModule,
        ),
    ).toThrow(OutboxOptionsError);
    expect(
      () =>
        new PlatformaticKafkaSender(
          { brokers, idempotent: true, retry: { retries: 2 } },
          fakeModule,
        ),
    ).not.toThrow();
  }, 20_000);
});
