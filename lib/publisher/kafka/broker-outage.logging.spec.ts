import { createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import type { LoggerService } from '@nestjs/common';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender } from './kafka.sender';
import { pendingEvent } from '../../../test/publisher/support/pending-event';

/** Every line logged through Nest's Logger, by level. */
class RecordingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string }> = [];
  private record = (level: string) => (message: unknown) =>
    this.lines.push({ level, message: String(message) });
  log = this.record('log');
  error = this.record('error');
  warn = this.record('warn');
  debug = this.record('debug');
  verbose = this.record('verbose');
  at(...levels: string[]): string[] {
    return this.lines.filter((l) => levels.includes(l.level)).map((l) => l.message);
  }
}

const connectionRefused = () =>
  Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9'), {
    name: 'KafkaJSConnectionError',
  });

/** A broker that is down: every call fails as kafkajs fails when no broker answers. */
class DownSender implements KafkaSender {
  down = true;
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(): Promise<number> {
    if (this.down) throw connectionRefused();
    return 1;
  }
  async send(): Promise<void> {
    if (this.down) throw connectionRefused();
  }
}

const event = (): OutboxEventRecord => pendingEvent();

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a broker outage is logged once a minute, not once per retry', () => {
  let logs: RecordingLogger;
  beforeEach(() => {
    logs = new RecordingLogger();
    Logger.overrideLogger(logs);
  });
  afterEach(() => Logger.overrideLogger(['error']));

  it("passes kafkajs's own lines (one per retry of each connection) to debug, none to warn or error", async () => {
    // Defect: each kafkajs connection error was passed through as WARN: 79 lines in a 22 s outage.
    const publisher = new KafkaPublisher({
      brokers: [`127.0.0.1:${await closedPort()}`],
      connectionTimeout: 200,
      retry: { retries: 1, initialRetryTime: 20, maxRetryTime: 50 },
    });
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const [outcome] = await publisher.publish([event()]);
        expect(outcome).toMatchObject({ status: 'retriable', scope: 'broker' });
      }
    } finally {
      await publisher.disconnect();
    }
    expect(logs.at('warn', 'error', 'log').filter((m) => m.includes('kafkajs'))).toEqual([]);
    expect(logs.at('debug').filter((m) => m.startsWith('kafkajs')).length).toBeGreaterThan(0);
  }, 30_000);

  it('while an outage lasts, says so at most once a minute, with how long and how many sends failed', async () => {
    let now = 1_000_000;
    const sender = new DownSender();
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender, () => now);
    // Five minutes of outage, a send failing every 2 s (the relay's backoff keeps it far rarer).
    for (let second = 0; second < 300; second += 2) {
      now = 1_000_000 + second * 1000;
      const [outcome] = await publisher.publish([event()]);
      expect(outcome).toMatchObject({ status: 'retriable', scope: 'broker' });
    }
    const still = logs.at('warn', 'log', 'error');
    expect(still).toEqual([
      expect.stringMatching(/unavailable for 1 min 0 s: 31 sends failed so far/),
      expect.stringMatching(/unavailable for 2 min 0 s: 61 sends failed so far/),
      expect.stringMatching(/unavailable for 3 min 0 s: 91 sends failed so far/),
      expect.stringMatching(/unavailable for 4 min 0 s: 121 sends failed so far/),
    ]);
    expect(still[0]).toContain('ECONNREFUSED');

    // The broker is back: nothing more while it answers, and the next outage starts afresh.
    sender.down = false;
    now += 2000;
    expect(await publisher.publish([event()])).toEqual([{ status: 'ok' }]);
    sender.down = true;
    for (let second = 0; second < 50; second += 2) {
      now += 2000;
      await publisher.publish([event()]);
    }
    expect(logs.at('warn', 'log', 'error')).toHaveLength(4);
  });

  it.each([
    ['kafkajs', "(kafkajs's own lines at debug level)", '@platformatic/kafka'],
    ['platformatic', "(@platformatic/kafka's own lines: DEBUG=plt:kafka:*)", 'kafkajs'],
  ] as const)(
    'names the own lines of the client that produces (%s)',
    async (client, named, other) => {
      // Defect: the line named kafkajs' lines when @platformatic/kafka produced.
      let now = 0;
      const publisher = new KafkaPublisher(
        { brokers: ['x:1'], client },
        new DownSender(),
        () => now,
      );
      for (; now <= 60_000; now += 2000) await publisher.publish([event()]);
      const [line] = logs.at('warn');
      expect(line).toContain(named);
      expect(line).not.toContain(other);
    },
  );

  it('does not take calls the relay gave up on (its term ended) for an outage', async () => {
    let now = 0;
    const sender = new DownSender();
    sender.partitionCount = async () => 1; // known partitions: the call reaches the send, aborted
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender, () => now);
    const aborted = new AbortController();
    aborted.abort();
    for (; now < 300_000; now += 2000) {
      const [outcome] = await publisher.publish([event()], { signal: aborted.signal });
      expect(outcome).toMatchObject({ status: 'retriable', scope: 'broker' });
    }
    expect(logs.at('warn', 'log', 'error')).toEqual([]);
  });
});
