import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { ChangeSource, OutboxChange } from '../ports/change-source';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { ClusterStreamHub } from './cluster-stream.hub';

const quiet: RelayLogger = { log: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/** A promise and its resolve. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('ClusterStreamHub', () => {
  // The tenants simulation (test/simulation/findings/tenant-subscribed-while-the-cluster-stream-closes-is-never-read.json):
  // a database woken while resting leaves the watched set empty; the hub's loop ends and closes
  // its cursor; the database's term subscribes while that close is on its way. It was resolved
  // as covered and the loop ended: its changes were never read again (only its sweep found them).
  it('reads for a database that subscribes while the stream closes on its way out', async () => {
    const opened: string[][] = [];
    const changes: OutboxChange[] = [];
    const firstOpened = signal();
    const firstClosing = signal();
    const firstClosed = signal();
    const source = (databases: readonly string[]): ChangeSource => ({
      open: () => {
        opened.push([...databases]);
        const first = opened.length === 1;
        if (first) firstOpened.resolve();
        return Promise.resolve({
          next: async () => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return { changes: changes.splice(0), position: `p${opened.length}` };
          },
          close: () => {
            if (!first) return Promise.resolve();
            firstClosing.resolve();
            return firstClosed.promise;
          },
        });
      },
    });
    const hub = new ClusterStreamHub(
      { batchSize: 10, idleMs: 10, backoff: { initialMs: 10, maxMs: 100, jitter: 0 } },
      { source, clock: systemClock, random: () => 0.5, logger: quiet },
    );
    const wake = (): boolean => false;
    hub.watch(['a'], wake);
    await firstOpened.promise;
    hub.watch([], wake); // 'a' woke: it rests no more, its term subscribes next
    await firstClosing.promise; // the stream closes on its way out
    const subscribed = hub.source('a').open(undefined);
    firstClosed.resolve();
    const cursor = await subscribed;
    const event = {
      _id: 'e1',
      aggregateType: 'Order',
      aggregateId: 'A1',
    } as unknown as OutboxEventRecord;
    changes.push({ token: 't1', event, database: 'a' });
    let read: OutboxChange[] = [];
    for (let tries = 0; tries < 50 && read.length === 0; tries++)
      read = (await cursor.next(10)).changes;
    expect(read.map((change) => change.event._id)).toEqual(['e1']);
    expect(opened).toEqual([['a'], ['a']]);
    await cursor.close();
  });
});
