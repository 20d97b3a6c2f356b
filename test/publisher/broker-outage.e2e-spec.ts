import { Logger } from '@nestjs/common';
import type { LoggerService } from '@nestjs/common';
import { KafkaPublisher } from '../../lib/publisher/kafka/kafka.publisher';
import {
  createTopics,
  describeWith,
  readTopic,
  sleep,
  startKafka,
  stopKafka,
  testServers,
  uniqueName,
  waitFor,
} from '../harness';
import { InMemoryRelayStore } from '../relay/support/in-memory-relay.store';
import { relayCore } from '../relay/support/relay-core';

describeWith(
  ['managed-kafka'],
  'relay core + KafkaPublisher through a 20 s broker outage (outbox store faked in memory)',
  () => {
    /** Lines above debug level (kafkajs's own lines go to debug). */
    const logged: string[] = [];
    const record = (message: unknown) => void logged.push(String(message));
    const recorder: LoggerService = { log: record, warn: record, error: record };
    beforeAll(() => Logger.overrideLogger(recorder));
    afterAll(() => Logger.overrideLogger(['error']));

    it('loses nothing, keeps per-aggregate order, dead-letters nothing, and recovers by itself', async () => {
      const prefix = `${uniqueName('outage')}.`;
      const topic = `${prefix}Order`;
      await createTopics([topic], 3);
      const store = new InMemoryRelayStore();
      const publisher = new KafkaPublisher({
        brokers: testServers().kafkaBrokers,
        topicPrefix: prefix,
        connectionTimeout: 1000,
        requestTimeout: 3000,
        retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1000 },
      });
      await publisher.connect();
      const { engine, metrics, offer } = relayCore(store, publisher, {
        batchSize: 100,
        maxInFlight: 1000,
        maxAttempts: 3,
        publishConcurrency: 2,
      });
      const total = 2000;
      const aggregates = 20;
      const produced: string[] = [];
      let stopped = false;
      // Writes go on through the outage; the relay must hold them, not drop or dead-letter them.
      // The load runs beside the broker's stop and start so that a start that fails fails the test
      // with its reason: scheduled from a timer, it was lost and the load waited for room forever.
      const load = (async () => {
        for (let i = 0; i < total; i++) {
          const doc = store.insert({ aggregateId: `agg-${i % aggregates}`, payload: { i } });
          produced.push(doc.eventId);
          await offer([doc]);
          if (i % 50 === 0) await sleep(stopped ? 400 : 20);
        }
      })();
      let loadFailed: unknown;
      load.catch((error: unknown) => (loadFailed = error ?? new Error('the load failed')));
      const offered = (count: number) => {
        if (loadFailed) throw loadFailed;
        return produced.length >= count;
      };
      try {
        await waitFor(() => offered(601), 60_000, '600 events offered');
        stopped = true;
        await stopKafka();
        await sleep(20_000);
        await startKafka();
        stopped = false;
        await waitFor(
          () => offered(total) && store.pending().length === 0,
          120_000,
          'every event offered and published after the broker came back',
        ).catch((error: Error) => {
          // Say where the relay stands, so that a relay which did not recover is told apart.
          const relay = JSON.stringify(engine.status());
          throw new Error(`${error.message}; pending ${store.pending().length}, relay ${relay}`);
        });
        await load;
        expect(store.pending()).toHaveLength(0);
        expect(store.deadLetters).toHaveLength(0);
        expect(metrics.outages).toBeGreaterThanOrEqual(1);

        // Everything is acknowledged already; read all of it, duplicates included (stopping at
        // `total` records would cut off the tail whenever the outage caused duplicates).
        const records = await readTopic(topic, {
          count: Number.MAX_SAFE_INTEGER,
          timeoutMs: 15_000,
        });
        const seen = new Set(records.map((r) => r.headers.ce_id));
        expect(produced.filter((id) => !seen.has(id))).toEqual([]);
        const order = new Map(produced.map((id, index) => [id, index]));
        for (let a = 0; a < aggregates; a++) {
          const firsts: number[] = [];
          const once = new Set<string>();
          for (const r of records.filter((rec) => rec.key === `agg-${a}`)) {
            if (once.has(r.headers.ce_id)) continue;
            once.add(r.headers.ce_id);
            firsts.push(order.get(r.headers.ce_id) as number);
          }
          expect(firsts).toEqual([...firsts].sort((x, y) => x - y));
        }
        // The log says when an outage starts and ends (and, in a longer one, once a minute),
        // not once per retry of each connection (it said so 79 times in a 22 s outage).
        expect(logged.filter((line) => line.startsWith('kafkajs'))).toEqual([]);
        expect(logged.filter((line) => line.includes('The broker is unavailable'))).toHaveLength(
          metrics.outages,
        );
        process.stdout.write(
          `[broker-outage] ${total} events, ${records.length - seen.size} duplicates, outages=${metrics.outages}, published=${metrics.published}, ${logged.length} log lines above debug\n`,
        );
      } finally {
        if (stopped) await startKafka().catch(() => undefined);
        await engine.close(5000);
        await publisher.disconnect();
      }
    }, 240_000);
  },
);
