import { Logger } from '@nestjs/common';
import { createTopics, describeWith, readTopic, uniqueName } from '../harness';
import { spawnRelay } from './support/child-relay';
import type { ChildRelay } from './support/child-relay';
import {
  readAllAfterDrain,
  sleep,
  startRelayApp,
  testLogLevels,
  waitFor,
} from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(300_000);

// The lease relies on a conditional upsert hitting the unique _id (duplicate key 11000) when
// another instance holds it. PoppyDB does not do that (observed: both instances get fencing 1 and
// leadership ping-pongs), so this claim needs real MongoDB.
describeWith(
  ['real-mongodb', 'kafka'],
  'two relays in two processes: one publishes, the other takes over',
  () => {
    let writer: RelayTestApp;
    let relays: ChildRelay[] = [];

    beforeAll(() => Logger.overrideLogger(testLogLevels()));
    afterAll(async () => {
      for (const relay of relays) relay.process.kill('SIGKILL');
      await writer?.connection.dropDatabase().catch(() => undefined);
      await writer?.close();
    });

    it('publishes each event once in steady state, and loses nothing when the leader is killed', async () => {
      const db = uniqueName('relay-failover');
      const prefix = `${uniqueName('failover')}.`;
      const topic = `${prefix}Order`;
      await createTopics([topic], 3);
      writer = await startRelayApp(db, false);
      relays = [spawnRelay(db, prefix), spawnRelay(db, prefix)];
      await Promise.all(relays.map((relay) => relay.ready));
      await waitFor(() => relays.filter((r) => r.leader).length === 1, 30_000, 'one leader');

      for (let i = 0; i < 200; i++) await writer.orders.place(`f-${i}`, `agg-${i % 10}`, i);
      const steady = await readAllAfterDrain(writer.connection, topic, 60_000, 5000);
      expect(steady).toHaveLength(200);
      expect(relays.filter((r) => r.leader)).toHaveLength(1);

      const leader = relays.find((r) => r.leader) as ChildRelay;
      const follower = relays.find((r) => r !== leader) as ChildRelay;
      const writing = (async () => {
        for (let i = 200; i < 400; i++) {
          await writer.orders.place(`f-${i}`, `agg-${i % 10}`, i);
          if (i % 20 === 0) await sleep(50);
        }
      })();
      await sleep(300);
      leader.process.kill('SIGKILL');
      const killedAt = Date.now();
      await waitFor(() => follower.leader, 30_000, 'the follower to take over');
      const takeoverMs = Date.now() - killedAt;
      await writing;
      await readAllAfterDrain(writer.connection, topic, 60_000, 1000);
      const records = await readTopic(topic, { count: Number.MAX_SAFE_INTEGER, timeoutMs: 8000 });
      const seqs = new Set(records.map((r) => JSON.parse(r.value as string).seq as number));
      expect([...Array(400).keys()].filter((i) => !seqs.has(i))).toEqual([]);
      process.stdout.write(
        `[leader-failover] takeover after ${takeoverMs} ms (lease 3000 ms); ${records.length - 400} duplicates\n`,
      );
      expect(takeoverMs).toBeLessThan(3000 + 5000);
    });
  },
);
