import { Logger } from '@nestjs/common';
import { createTopics, describeWith, uniqueName } from '../harness';
import type { Need } from '../harness';
import { spawnRelay } from './support/child-relay';
import type { ChildRelay } from './support/child-relay';
import { describeSpread, isEven, readSpread } from './support/partition-spread';
import {
  checkFirstOccurrences,
  readAllAfterDrain,
  startRelayApp,
  testLogLevels,
  waitFor,
  writeOrders,
} from './support/relay-app';
import type { OrderWriting, RelayTestApp } from './support/relay-app';

jest.setTimeout(600_000);

/**
 * Issue 14's acceptance run: three relay processes configured with `relay: { partitions: 6 }`
 * (through the public module options, in relay-child.ts), a writer, one relay SIGKILLed, one
 * added. Asserts that no event is lost and that the partitions are spread evenly after each
 * change (printed); per-aggregate order is asserted where only real MongoDB can prove it.
 */
interface Run extends OrderWriting {
  label: string;
}

const PARTITIONS = 6;
/** The relay options of every child: the test options (lease 3 s) plus the partitions. */
const RELAY = { partitions: PARTITIONS };

function suite(needs: Need[], name: string, run: Run, checkOrder: boolean): void {
  describeWith(needs, name, () => {
    const children: ChildRelay[] = [];
    let writer: RelayTestApp | undefined;

    beforeAll(() => Logger.overrideLogger(testLogLevels()));
    afterAll(async () => {
      for (const child of children) child.process.kill('SIGKILL');
      await writer?.connection.dropDatabase().catch(() => undefined);
      await writer?.close();
    });

    it('loses no event, keeps per-aggregate order, spreads the partitions evenly after a kill and a join', async () => {
      const db = uniqueName('relay-partitions');
      const prefix = `${uniqueName('parts')}.`;
      const topic = `${prefix}Order`;
      await createTopics([topic], 6);
      writer = await startRelayApp(db, false);
      const w = writer;
      const live = () => children.filter((c) => c.process.exitCode === null && !c.process.killed);
      const pids = () => live().map((c) => c.process.pid!);
      const log = (line: string) => process.stdout.write(`[three-relays ${run.label}] ${line}\n`);
      const evenly = async (what: string, timeoutMs = 60_000) => {
        const started = Date.now();
        await waitFor(async () => isEven(await readSpread(w.connection), pids()), timeoutMs, what);
        const ms = Date.now() - started;
        log(`${what} after ${ms} ms: ${describeSpread(await readSpread(w.connection))}`);
        return ms;
      };
      const start = async () => {
        const child = spawnRelay(db, prefix, RELAY);
        children.push(child);
        await child.ready;
        return child;
      };

      for (let i = 0; i < 3; i++) await start();
      await evenly('3 relays, 2 partitions each');

      const {
        commitOrder,
        written,
        refused,
        done: writing,
      } = writeOrders(w, run, { every: 20, ms: 50 });

      await waitFor(async () => written() >= run.total / 3, 120_000, 'a third of the events');
      const victim = live()[0];
      victim.process.kill('SIGKILL');
      await victim.exited;
      log(`SIGKILLed pid ${victim.process.pid} at ${written()} events written`);
      const pauseMs = await evenly('2 relays after the kill, 3 partitions each');
      log(
        `hand-over pause after the kill (lease 3 s): ${pauseMs} ms until every partition was held again`,
      );

      await waitFor(
        async () => written() >= (2 * run.total) / 3,
        120_000,
        'two thirds of the events',
      );
      await start();
      await evenly('3 relays after a join, 2 partitions each');

      await writing;
      const records = await readAllAfterDrain(w.connection, topic, 240_000, 10_000);
      const result = checkFirstOccurrences(records, commitOrder);
      log(
        `${run.total} events, ${records.length} records, ${result.duplicates} duplicates, ` +
          `${result.missing.length} missing, ${result.outOfOrder.length} aggregates out of order, ` +
          `${refused()} transactions refused by the server and placed again`,
      );
      for (const child of live()) child.process.kill('SIGTERM');
      await Promise.all(children.map((c) => c.exited));
      expect(result.missing).toEqual([]);
      if (checkOrder) expect(result.outOfOrder).toEqual([]);
    });
  });
}

// The full claim, with concurrent writers: per-aggregate commit order is only provable on real
// MongoDB (INFRA.md).
suite(
  ['real-mongodb', 'kafka'],
  'three relay processes share 6 partitions (kill one, add one)',
  { total: 3000, aggregates: 60, workers: 6, label: 'real MongoDB' },
  true,
);

// No loss and an even spread with one writer; order reported, not asserted. Real MongoDB only:
// on PoppyDB, with three relay processes on it, the writer's inserts fail now and then with
// "Internal error: null" (1 of 3 clean-clone CI runs of 2026-12-01), a server fault no relay
// behaviour explains; the claim is not provable there.
suite(
  ['real-mongodb', 'kafka'],
  'three relay processes share 6 partitions, one writer',
  { total: 900, aggregates: 60, workers: 1, label: 'one writer' },
  false,
);
