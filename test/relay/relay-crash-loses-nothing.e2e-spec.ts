import { Logger } from '@nestjs/common';
import { createTopics, describeWith, uniqueName } from '../harness';
import { spawnRelay } from './support/child-relay';
import type { ChildRelay } from './support/child-relay';
import {
  checkFirstOccurrences,
  readAllAfterDrain,
  sleep,
  startRelayApp,
  testLogLevels,
} from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(600_000);

// Commit order per aggregate is what is checked: only real MongoDB proves it (INFRA.md).
describeWith(
  ['real-mongodb', 'kafka'],
  'a relay SIGKILLed at random while events are written',
  () => {
    let writer: RelayTestApp;
    let child: ChildRelay | undefined;

    beforeAll(() => Logger.overrideLogger(testLogLevels()));
    afterAll(async () => {
      child?.process.kill('SIGKILL');
      await writer?.connection.dropDatabase().catch(() => undefined);
      await writer?.close();
    });

    it('publishes every eventId at least once, first occurrences in commit order per aggregate', async () => {
      const db = uniqueName('relay-crash');
      const prefix = `${uniqueName('crash')}.`;
      const topic = `${prefix}Order`;
      await createTopics([topic], 6);
      writer = await startRelayApp(db, false);

      const total = 5000;
      const aggregates = 50;
      const workers = 10;
      const commitOrder = new Map<string, string[]>();
      let written = 0;
      const write = async (worker: number): Promise<void> => {
        // Each worker owns 5 aggregates and writes them one call at a time: per aggregate, the
        // order in which calls return is the commit order.
        for (let n = worker; n < total; n += workers) {
          const aggregate = `agg-${(n % aggregates).toString().padStart(2, '0')}`;
          await writer.orders.place(`o-${n}`, aggregate, n);
          const [doc] = await writer.connection
            .collection('outbox')
            .find({ 'payload.orderId': `o-${n}` })
            .toArray();
          const list = commitOrder.get(aggregate) ?? [];
          list.push(doc.eventId as string);
          commitOrder.set(aggregate, list);
          written++;
          if (n % 50 === worker) await sleep(150);
        }
      };
      const writing = Promise.all(Array.from({ length: workers }, (_, w) => write(w)));

      let kills = 0;
      while (kills < 10 || written < total) {
        child = spawnRelay(db, prefix);
        await child.ready.catch(() => undefined);
        await sleep(200 + Math.random() * 1800);
        child.process.kill('SIGKILL');
        await child.exited;
        kills++;
      }
      await writing;

      child = spawnRelay(db, prefix);
      await child.ready;
      const records = await readAllAfterDrain(writer.connection, topic, 240_000, 10_000);
      child.process.kill('SIGTERM');
      await child.exited;
      child = undefined;

      const { missing, duplicates, outOfOrder } = checkFirstOccurrences(records, commitOrder);
      process.stdout.write(
        `[relay-crash] ${total} events, ${kills} SIGKILLs, ${records.length} records, ${duplicates} duplicates\n`,
      );
      expect(missing).toEqual([]);
      expect(outOfOrder).toEqual([]);
      expect(kills).toBeGreaterThanOrEqual(10);
    });
  },
);
