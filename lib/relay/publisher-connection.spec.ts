import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import { PublisherConnection } from './publisher-connection';
import type { RelayLogger } from './ports/relay-logger';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };

/** A publisher whose connect settles when the test says; it records connects and disconnects. */
function publisherWithPendingConnect() {
  const calls: string[] = [];
  let settle!: (error?: Error) => void;
  const publisher = {
    connect: () =>
      new Promise<void>((resolve, reject) => {
        calls.push('connect');
        settle = (error) => {
          calls.push(error ? 'connect failed' : 'connected');
          if (error) reject(error);
          else resolve();
        };
      }),
    disconnect: async () => void calls.push('disconnect'),
  } as unknown as OutboxPublisher;
  return { publisher, calls, settle: (error?: Error) => settle(error) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('PublisherConnection (a stop while connecting)', () => {
  it('a stop while connect() is pending disconnects the producer once the connect went through', async () => {
    const { publisher, calls, settle } = publisherWithPendingConnect();
    const connection = new PublisherConnection(publisher, silent);
    connection.open();
    const closed = connection.close();
    settle();
    await closed;
    await flush();
    // The producer connected after the stop began: it is disconnected after that, not left open.
    expect(calls.lastIndexOf('disconnect')).toBeGreaterThan(calls.indexOf('connected'));
  });

  it('a stop while connect() is pending disconnects even if the connect then fails', async () => {
    const { publisher, calls, settle } = publisherWithPendingConnect();
    const connection = new PublisherConnection(publisher, silent);
    connection.open();
    const closed = connection.close();
    settle(new Error('ECONNREFUSED'));
    await closed;
    await flush();
    expect(calls).toContain('disconnect');
  });

  it('disconnects once after a connect that settled, and not at all if never opened', async () => {
    const { publisher, calls, settle } = publisherWithPendingConnect();
    const never = new PublisherConnection(publisher, silent);
    await never.close();
    expect(calls).toEqual([]);
    const connection = new PublisherConnection(publisher, silent);
    connection.open();
    settle();
    await flush();
    await connection.close();
    await connection.close();
    expect(calls).toEqual(['connect', 'connected', 'disconnect']);
  });
});
