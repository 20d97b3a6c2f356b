import type { LoggerService } from '@nestjs/common';
import { KafkaPublisher } from '../../../lib/publisher/kafka/kafka.publisher';
import type { KafkaConnectionOptions } from '../../../lib/publisher/kafka/kafka-publisher.options';
import { KafkajsSender } from '../../../lib/publisher/kafka/kafkajs.sender';
import type { KafkaClientName, KafkaSender } from '../../../lib/publisher/kafka/kafka.sender';
import { platformaticFaultClient } from '../../contracts/support/platformatic-ports';
import {
  createTopics,
  readTopic,
  startFaultProxy,
  testKafka,
  uniqueName,
  waitFor,
} from '../../harness';
import type { FaultSpec, KafkaFaultProxy, KafkaRecord } from '../../harness';
import { InMemoryRelayStore } from './in-memory-relay.store';
import { relayCore } from './relay-core';

/** The seed of this run's fault schedule: `FAULTY_BROKER_SEED` replays one. */
export function faultSeed(): number {
  const given = Number(process.env.FAULTY_BROKER_SEED);
  return Number.isInteger(given) && given > 0 ? given : 1 + Math.floor(Math.random() * 2 ** 31);
}

/** mulberry32: a small seeded generator, the same schedule for the same seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const REQUEST_TIMEOUT_MS = 1_500;

/** Attempts of one send by the clients here (`retries: 2`): a fault armed this many times in a row fails it. */
const SEND_ATTEMPTS = 3;

/**
 * Each fault kind twice, at seeded moments: from the n-th Produce request of the topic (or the
 * n-th new connection) after the drain starts. A request fault fires on `SEND_ATTEMPTS`
 * requests in a row, so that the send it hits fails after the client's own retries (once, the
 * client's retry usually succeeds and the relay never sees the fault). A backlog of `events` in
 * batches of `batchSize` makes about `events / batchSize` produce requests when nothing fails.
 */
export function faultSchedule(seed: number, topic: string, produceRequests: number): FaultSpec[] {
  const random = seeded(seed);
  const moment = () => 1 + Math.floor(random() * Math.max(1, produceRequests - 2));
  const times = SEND_ATTEMPTS;
  const specs: FaultSpec[] = [];
  for (let round = 0; round < 2; round++) {
    specs.push(
      { api: 'Produce', topic, action: 'drop-response-then-close', times, after: moment() },
      {
        api: 'Produce',
        topic,
        action: 'delay-response',
        delayMs: REQUEST_TIMEOUT_MS + 1_000,
        times,
        after: moment(),
      },
      {
        api: 'Produce',
        topic,
        action: 'cut-request',
        forwardBytes: Math.floor(random() * 64),
        times,
        after: moment(),
      },
      { action: 'refuse-connections', times: 2, after: 1 + Math.floor(random() * 3) },
    );
  }
  return specs;
}

const quiet: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

function sender(client: KafkaClientName, options: KafkaConnectionOptions): Promise<KafkaSender> {
  return client === 'platformatic'
    ? platformaticFaultClient.create(options)
    : Promise.resolve(new KafkajsSender(options, quiet));
}

/** Every record of `topic`, duplicates included (the count read from its offsets first). */
async function readAll(topic: string): Promise<KafkaRecord[]> {
  const admin = testKafka('outbox-faulty-admin').admin();
  await admin.connect();
  let count = 0;
  try {
    for (const offset of await admin.fetchTopicOffsets(topic)) count += Number(offset.high);
  } finally {
    await admin.disconnect();
  }
  return count === 0 ? [] : readTopic(topic, { count, timeoutMs: 20_000 });
}

export interface FaultyDrain {
  seed: number;
  events: number;
  /** Event ids in insert order. */
  produced: string[];
  /** Event ids the relay's store marked published. */
  published: string[];
  deadLettered: number;
  /** The last error of each dead letter, distinct. */
  deadLetterErrors: string[];
  records: KafkaRecord[];
  proxy: ReturnType<KafkaFaultProxy['stats']>;
  faultsFired: number;
}

/**
 * A backlog of `events` over `aggregates` aggregates, drained by the relay core (RelayEngine +
 * KafkaPublisher of `client`, in-memory outbox) through the fault proxy, which injects the
 * seeded schedule; then the topic read back. Bounded: the drain gets `drainMs`.
 */
export async function drainThroughFaults(opts: {
  client: KafkaClientName;
  idempotent: boolean;
  seed: number;
  events: number;
  aggregates: number;
  drainMs: number;
}): Promise<FaultyDrain> {
  const prefix = `${uniqueName(`faulty-${opts.client}`)}.`;
  const topic = `${prefix}Order`;
  await createTopics([topic], 3);
  const proxy = await startFaultProxy();
  const options: KafkaConnectionOptions = {
    brokers: [proxy.broker],
    clientId: 'outbox-faulty-broker',
    connectionTimeout: 1_000,
    requestTimeout: REQUEST_TIMEOUT_MS,
    retry: { retries: 2, initialRetryTime: 50, maxRetryTime: 300 },
    idempotent: opts.idempotent,
  };
  const publisher = new KafkaPublisher(
    { ...options, topicPrefix: prefix },
    await sender(opts.client, options),
  );
  const store = new InMemoryRelayStore();
  const batchSize = 25;
  const { engine, offer } = relayCore(store, publisher, {
    batchSize,
    maxInFlight: 200,
    // The relay's default: a failure counted against the events (class `event`) dead-letters
    // them within seconds; the faults here, all of the broker or the way to it, never should.
    maxAttempts: 10,
    publishConcurrency: 2,
    backoff: { initialMs: 100, maxMs: 1_000, jitter: 0.2 },
  });
  const faults = faultSchedule(opts.seed, topic, Math.ceil(opts.events / batchSize)).map((spec) =>
    proxy.arm(spec),
  );
  const produced: string[] = [];
  try {
    await publisher.connect();
    const docs = Array.from({ length: opts.events }, (_, i) =>
      store.insert({ aggregateId: `agg-${i % opts.aggregates}`, payload: { i } }),
    );
    produced.push(...docs.map((doc) => doc.eventId));
    await offer(docs);
    await waitFor(
      () => store.pending().length === 0,
      opts.drainMs,
      `the backlog drained (seed ${opts.seed})`,
    ).catch((error: Error) => {
      const pending = store.pending();
      const attempts = [...new Set(pending.map((doc) => doc.attempts))];
      throw new Error(
        `${error.message}; pending ${pending.length} (attempts ${attempts.join('/')}, ` +
          `last error ${JSON.stringify(pending[0]?.lastError ?? null)}), relay ${JSON.stringify(engine.status())}, ` +
          `proxy ${JSON.stringify({ ...proxy.stats(), firings: proxy.stats().firings.length })}`,
      );
    });
  } finally {
    proxy.disarmAll();
    await engine.close(5_000);
    await publisher.disconnect();
    await proxy.close();
  }
  return {
    seed: opts.seed,
    events: opts.events,
    produced,
    published: [...store.docs.values()]
      .filter((doc) => doc.status === 'published')
      .map((doc) => doc.eventId),
    deadLettered: store.deadLetters.length,
    deadLetterErrors: [
      ...new Set(store.deadLetters.map((dead) => dead.errors.at(-1)?.error ?? 'no error')),
    ],
    records: await readAll(topic),
    proxy: proxy.stats(),
    faultsFired: faults.reduce((sum, fault) => sum + fault.fired, 0),
  };
}

/**
 * The relay's promises under faults: every event in Kafka, none marked published without being
 * there, per-aggregate order of first publications kept. Throws naming the seed; returns the
 * duplicates.
 */
export function checkFaultyDrain(drain: FaultyDrain): { duplicates: number } {
  const failures: string[] = [];
  const inKafka = new Set(drain.records.map((record) => record.headers.ce_id));
  const publishedNotStored = drain.published.filter((id) => !inKafka.has(id));
  if (publishedNotStored.length > 0) {
    failures.push(
      `${publishedNotStored.length} events marked published that Kafka does not hold: ${publishedNotStored.slice(0, 10).join(', ')}`,
    );
  }
  const lost = drain.produced.filter((id) => !inKafka.has(id));
  if (lost.length > 0) failures.push(`${lost.length} of ${drain.events} events not in Kafka`);
  if (drain.deadLettered > 0) {
    failures.push(
      `${drain.deadLettered} events dead-lettered (${drain.deadLetterErrors.slice(0, 3).join(' | ')})`,
    );
  }
  const order = new Map(drain.produced.map((id, index) => [id, index]));
  const firsts = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const record of drain.records) {
    const id = record.headers.ce_id;
    if (seen.has(id)) continue;
    seen.add(id);
    const list = firsts.get(record.key ?? '') ?? [];
    list.push(order.get(id) ?? -1);
    firsts.set(record.key ?? '', list);
  }
  for (const [key, list] of firsts) {
    const out = list.findIndex((value, i) => i > 0 && value < list[i - 1]);
    if (out > 0)
      failures.push(
        `aggregate ${key}: event #${list[out]} first published after #${list[out - 1]}`,
      );
  }
  if (failures.length > 0) {
    throw new Error(
      `seed ${drain.seed} (replay with FAULTY_BROKER_SEED=${drain.seed}): ${failures.join('; ')}`,
    );
  }
  return { duplicates: drain.records.length - seen.size };
}

/**
 * The relay-level fault cases for one client, with and without `idempotent`: a backlog drained
 * through the proxy's seeded faults; every event in Kafka, none marked published without being
 * there, per-aggregate order kept; the duplicates printed.
 */
export function faultyDrainCases(client: KafkaClientName): void {
  for (const idempotent of [false, true]) {
    it(`idempotent ${idempotent}: every event in Kafka, none marked published without being there, per-aggregate order kept`, async () => {
      const seed = faultSeed();
      const drain = await drainThroughFaults({
        client,
        idempotent,
        seed,
        events: 600,
        aggregates: 30,
        drainMs: 30_000,
      });
      const label = `[faulty-broker] ${client} idempotent=${idempotent} seed=${seed}`;
      process.stdout.write(
        `${label} events=${drain.events} records=${drain.records.length} faults fired=${drain.faultsFired} produce requests=${drain.proxy.requests.Produce ?? 0} refused connections=${drain.proxy.refused}\n`,
      );
      const { duplicates } = checkFaultyDrain(drain);
      process.stdout.write(`${label} duplicates=${duplicates}\n`);
      expect(drain.faultsFired).toBeGreaterThan(0);
    }, 80_000);
  }
}
