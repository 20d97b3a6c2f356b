import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { ChangeSource, OutboxChange } from '../ports/change-source';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { ClusterStreamHub } from './cluster-stream.hub';

const quiet: RelayLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 2_000; waited += 5) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('ClusterStreamHub', () => {
  // The tenants simulation (test/simulation/findings/tenant-subscribed-while-the-cluster-stream-closes-is-never-read.json):
  // a database woken while resting leaves the watched set empty; the hub's loop ends and closes
  // its cursor; the database's term subscribes while that close is on its way. It was resolved
  // as covered and the loop ended: its changes were never read again (only its sweep found them).
  it('reads for a database that subscribes while the stream closes on its way out', async () => {
    const opened: string[][] = [];
    const changes: OutboxChange[] = [];
    let closing: (() => void) | undefined;
    const source = (databases: readonly string[]): ChangeSource => ({
      open: () => {
        opened.push([...databases]);
        return Promise.resolve({
          next: async () => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return { changes: changes.splice(0), position: `p${opened.length}` };
          },
          close: () =>
            opened.length === 1
              ? new Promise<void>((resolve) => (closing = resolve))
              : Promise.resolve(),
        });
      },
    });
    const hub = new ClusterStreamHub(
      { batchSize: 10, idleMs: 10, backoff: { initialMs: 10, maxMs: 100, jitter: 0 } },
      { source, clock: systemClock, random: () => 0.5, logger: quiet },
    );
    const wake = (): boolean => false;
    hub.watch(['a'], wake);
    await until(() => opened.length === 1, 'the stream to open');
    hub.watch([], wake); // 'a' woke: it rests no more, its term subscribes next
    await until(() => closing !== undefined, 'the stream to close on its way out');
    const subscribed = hub.source('a').open(undefined);
    (closing as () => void)();
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
