/* One relay over many tenant databases (`npm run bench -- tenants`, issue #33): what following N
 * databases costs the relay beside a single-database relay, measured in one run. For N in 1, 10,
 * 100 and 1 000 tenant databases (`OUTBOX_BENCH_TENANTS=1,10,...` sets the sizes; 10 under
 * `--smoke`), each with its outbox collection and indexes created beforehand as the write side's
 * bootstrap and the relay create them, a relay in its own process (bench/tenants-relay.child.ts):
 *   - start-up: from `relay.start()` until `status()` shows every database followed;
 *   - idle: its CPU time over an idle window, then its RSS after a forced GC;
 *   - events: `OUTBOX_BENCH_TENANT_EVENTS` (default 5 000, 500 under `--smoke`) written into 1 %
 *     of the databases (at least one); the relay's CPU time per event from before the first write
 *     until all are acknowledged by Kafka and marked published. Kafka must hold each event exactly
 *     once (every event is marked published, so acknowledged at least once, and the topic holds as
 *     many records as events): a lost event fails the part, and so does a duplicate unless the
 *     relay's leadership ended meanwhile (a cause docs/guarantees.md names: they are counted).
 *     The lease terms begun and why leadership ended are printed.
 * A size that cannot be measured (start-up over BENCH_START_TIMEOUT_MS, events still pending
 * 180 s after they were written) is reported with the reason; the others go on, the part fails.
 * First a single-database relay (no `tenants`) on the same events: the baseline of the ratios.
 * Then the cluster-wide stream (`tenants.stream: 'cluster'`) at each size, then one stream per
 * database (`'per-database'`) at the sizes up to `OUTBOX_BENCH_TENANTS_PER_DATABASE_MAX` (default
 * 100: each of its streams holds a connection of the relay's pool in a waiting `getMore`).
 * The goal (issue #33): at 1 000 databases, with the cluster-wide stream, CPU per event within
 * 1.5x and idle RSS within +50 MB of the single-database relay. */
import type { Kafka } from 'kafkajs';
import { mongo as driver } from 'mongoose';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../lib/common/outbox-storage.options';
import { OutboxEventSchema } from '../lib/documents/outbox-event.schema';
import { ensureRelayIndexes } from '../lib/relay/mongo/relay-indexes';
import { RELAY_DEFAULTS } from '../lib/relay/relay.options';
import { check, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';
import type {
  IdleReport,
  StartReport,
  TenantsChildRequest,
  WindowReport,
} from './tenants-relay.child';
import { RelayChild } from './support/relay-child';
import {
  benchKafka,
  createTopic,
  dbUri,
  makeEvent,
  suffix,
  topicSize,
} from './support/bench-outbox';

const BATCH = 500;
/** The idle window (a sweep of every database falls in it: `sweepIntervalMs` is 10 s). */
const IDLE_MS = { full: 12_000, smoke: 3_000 };
/** How long the relay may take to publish the events once written. */
const PUBLISH_TIMEOUT_MS = 180_000;
const GOAL = { cpuRatio: 1.5, idleMb: 50, size: 1000 };

function sizes(ctx: BenchContext): number[] {
  const set = process.env.OUTBOX_BENCH_TENANTS;
  if (set) return set.split(',').map(Number);
  return ctx.smoke ? [10] : [1, 10, 100, 1000];
}

const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;
const spaces = (idle: IdleReport): string => `${mb(idle.newSpace)} / ${mb(idle.oldSpace)}`;
const quiet = { log() {}, warn() {}, error() {}, debug() {} };

/** One relay measured: its configuration and what it reported. */
interface Measured {
  label: string;
  databases: number;
  start: StartReport;
  idle: IdleReport;
  window: WindowReport;
  events: number;
  /** Idle again after the events (forced GC). */
  worked: IdleReport;
}

/** Creates `database`'s outbox and dead-letter collections and their indexes, as the app does. */
async function prepareDatabase(client: driver.MongoClient, database: string): Promise<void> {
  const db = client.db(database);
  const outbox = db.collection(OUTBOX_DEFAULT_COLLECTIONS.outbox);
  for (const [key, options] of OutboxEventSchema.indexes()) {
    await outbox.createIndex(
      key as driver.IndexSpecification,
      options as driver.CreateIndexesOptions,
    );
  }
  await ensureRelayIndexes(
    outbox as never,
    db.collection(OUTBOX_DEFAULT_COLLECTIONS.deadLetters) as never,
    RELAY_DEFAULTS.retentionSeconds,
    quiet,
  );
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** `events` events spread over `databases` (round robin), each insert a page of `BATCH`. */
async function writeEvents(
  client: driver.MongoClient,
  databases: readonly string[],
  events: number,
): Promise<void> {
  const per = databases.map(
    (_, i) => Math.floor(events / databases.length) + (i < events % databases.length ? 1 : 0),
  );
  await Promise.all(
    databases.map(async (database, d) => {
      const outbox = client.db(database).collection('outbox');
      for (let from = 0; from < per[d]; from += BATCH) {
        const page = Array.from({ length: Math.min(BATCH, per[d] - from) }, (_, k) => ({
          ...makeEvent(from + k),
          tenant: database,
        }));
        await outbox.insertMany(page as never[]);
      }
    }),
  );
}

async function pendingIn(
  client: driver.MongoClient,
  databases: readonly string[],
): Promise<number> {
  let pending = 0;
  for (const database of databases) {
    pending += await client.db(database).collection('outbox').countDocuments({ status: 'pending' });
  }
  return pending;
}

/** How many lease terms the relay of `appDb` began (the lease's fencing number): 1 when none ended. */
async function termsBegun(client: driver.MongoClient, appDb: string): Promise<number> {
  const lease = await client
    .db(appDb)
    .collection<{ _id: string; fencing?: number }>(OUTBOX_DEFAULT_COLLECTIONS.relayState)
    .findOne({ _id: 'lease:default' });
  return lease?.fencing ?? 0;
}

const perSecond = (cpuMs: number, windowMs: number): string =>
  `${(cpuMs / (windowMs / 1000)).toFixed(1)} ms/s over ${(windowMs / 1000).toFixed(0)} s`;

/**
 * One relay process over `tenants` (undefined: the single-database baseline on `baseDb`), its
 * figures printed as they come (and against `baseline`), so that a size that stops shows how far
 * it got. Throws a BenchCheckError on an event lost or duplicated, an Error when it stops.
 */
async function measure(
  ctx: BenchContext,
  kafka: Kafka,
  client: driver.MongoClient,
  run: string,
  label: string,
  config: { baseDb: string; tenants?: readonly string[]; stream?: 'cluster' | 'per-database' },
  events: number,
  baseline?: Measured,
): Promise<Measured> {
  const prefix = `bt-${run}-${label.replace(/[^a-z0-9]+/gi, '-')}.`;
  const topic = `${prefix}Order`;
  await createTopic(kafka, topic);
  const databases = config.tenants ?? [config.baseDb];
  const written = databases.slice(0, Math.max(1, Math.round(databases.length / 100)));
  const appDb = config.tenants ? `${config.baseDb}_app` : config.baseDb;
  const child = new RelayChild('tenants-relay', {
    mongoUri: dbUri(ctx, appDb, false),
    prefix,
    batch: BATCH,
    env: {
      ...(config.tenants && { BENCH_TENANT_DATABASES: JSON.stringify(config.tenants) }),
      ...(config.stream && { BENCH_TENANT_STREAM: config.stream }),
    },
    execArgv: ['--expose-gc'],
    echoStderr: true,
  });
  const ask = async <T>(request: TenantsChildRequest): Promise<T> => {
    const answer = child.next<T>();
    child.process.send(request);
    return answer;
  };
  process.stdout.write(`${label}:\n`);
  try {
    await child.next();
    const start = await ask<StartReport>('start');
    line(
      'start-up: relay.start() -> every database followed',
      `${start.startSeconds.toFixed(2)} s (CPU ${start.startCpuSeconds.toFixed(2)} s), ${start.followed} followed`,
    );
    const idle = await ask<IdleReport>({
      idle: { windowMs: ctx.smoke ? IDLE_MS.smoke : IDLE_MS.full },
    });
    line(
      'idle, forced GC: RSS / heap reserved / live / external',
      `${mb(idle.rss)} / ${mb(idle.heapTotal)} / ${mb(idle.heapUsed)} / ${mb(idle.external)}`,
    );
    line('  of the heap reserved: young generation / old space', spaces(idle));
    line('idle: CPU time per second', perSecond(idle.cpuMs, idle.windowMs));
    if (baseline) {
      const over = idle.rss - baseline.idle.rss;
      line('idle RSS over the single-database relay', `${over >= 0 ? '+' : ''}${mb(over)}`);
    }
    await ask('measure');
    await writeEvents(client, written, events);
    const deadline = Date.now() + PUBLISH_TIMEOUT_MS;
    let pending = await pendingIn(client, written);
    while (pending > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pending = await pendingIn(client, written);
    }
    const window = await ask<WindowReport>('end');
    const inKafka = await topicSize(kafka, topic);
    const terms = await termsBegun(client, appDb);
    line('lease terms begun (the fencing number; 1: never lost)', String(terms));
    const lost = window.leadershipLost;
    if (lost.length > 0) {
      const reasons = [...new Set(lost)].map(
        (why) => `${lost.filter((one) => one === why).length}x ${why}`,
      );
      line('leadership ended, by reason', reasons.join('; '));
    }
    if (pending > 0) {
      throw new Error(
        `${pending} of ${events} events still pending ${PUBLISH_TIMEOUT_MS / 1000} s after they were written (Kafka holds ${inKafka}; ${terms} lease terms begun)`,
      );
    }
    const cpuPerEvent = (window.cpuMs * 1000) / events;
    line(
      `${events} events -> acked by Kafka and marked published`,
      `${(window.elapsedMs / 1000).toFixed(2)} s, CPU ${(window.cpuMs / 1000).toFixed(2)} s: ${cpuPerEvent.toFixed(1)} µs/event`,
    );
    // The window's CPU less what the relay spends idle over as long (sweeps, lease, streams).
    const idleShare = (idle.cpuMs / idle.windowMs) * window.elapsedMs;
    line(
      '  of it beyond the idle rate over the same time',
      window.cpuMs >= idleShare
        ? `${(((window.cpuMs - idleShare) * 1000) / events).toFixed(1)} µs/event`
        : 'none: below the idle rate (terms began again in the window)',
    );
    line('messages in Kafka / events', `${inKafka} / ${events}`);
    // Every event marked published was acknowledged at least once: as many records as events
    // means each exactly once.
    check(inKafka >= events, `${label}: ${events - inKafka} events never reached Kafka`);
    // A leadership lost is a cause of a second publication (docs/guarantees.md): the events a
    // term published but had not marked are published again by the next. Without one, none may be.
    check(
      inKafka === events || lost.length > 0,
      `${label}: ${inKafka - events} events published twice, no leadership lost`,
    );
    if (inKafka > events) {
      line('  duplicates (each after a leadership lost)', String(inKafka - events));
    }
    if (baseline) {
      const ratio = cpuPerEvent / ((baseline.window.cpuMs * 1000) / baseline.events);
      line('CPU per event over the single-database relay', `${ratio.toFixed(2)}x`);
    }
    // Idle again once it has worked: V8 grows its young generation under a sustained allocation
    // rate (a start-up over 1 000 databases, or publishing), and keeps it; a relay that ran a
    // while holds it whatever it follows.
    const worked = await ask<IdleReport>({
      idle: { windowMs: ctx.smoke ? IDLE_MS.smoke : IDLE_MS.full },
    });
    line(
      'idle after the events, forced GC: RSS / heap reserved / live',
      `${mb(worked.rss)} / ${mb(worked.heapTotal)} / ${mb(worked.heapUsed)}`,
    );
    line('  of the heap reserved: young generation / old space', spaces(worked));
    if (baseline?.worked) {
      const over = worked.rss - baseline.worked.rss;
      line(
        '  RSS over the single-database relay after its events',
        `${over >= 0 ? '+' : ''}${mb(over)}`,
      );
    }
    return { label, databases: databases.length, start, idle, window, events, worked };
  } finally {
    if (child.process.connected) child.process.send('stop');
    await child.exited;
  }
}

async function tenantsPart(ctx: BenchContext): Promise<void> {
  const kafka = benchKafka(ctx, 'outbox-bench-tenants');
  const run = suffix().replace(/-/g, '');
  const base = `bt_${run}`;
  const counts = sizes(ctx);
  const largest = Math.max(...counts);
  const perDatabaseMax = Number(process.env.OUTBOX_BENCH_TENANTS_PER_DATABASE_MAX ?? 100);
  const events = sized(ctx, 'OUTBOX_BENCH_TENANT_EVENTS', 5_000, 500);
  const tenants = Array.from(
    { length: largest },
    (_, i) => `${base}_t${String(i).padStart(4, '0')}`,
  );
  const client = new driver.MongoClient(dbUri(ctx, 'admin', false));
  await client.connect();
  const stops: string[] = [];
  try {
    const created = Date.now();
    await inParallel([`${base}_single`, ...tenants], 4, (database) =>
      prepareDatabase(client, database),
    );
    process.stdout.write(
      `  (${largest + 1} databases created with their outbox indexes in ${((Date.now() - created) / 1000).toFixed(1)} s; ${events} events per relay, into 1 % of its databases)\n`,
    );
    const baseline = await measure(
      ctx,
      kafka,
      client,
      run,
      'single database (no tenants)',
      { baseDb: `${base}_single` },
      events,
    );
    const configs = [
      ...counts.map((n) => ({ n, stream: 'cluster' as const })),
      ...counts
        .filter((n) => n <= perDatabaseMax)
        .map((n) => ({ n, stream: 'per-database' as const })),
    ];
    const results: Measured[] = [];
    for (const { n, stream } of configs) {
      const label = `${n} tenant database${n === 1 ? '' : 's'}, ${stream} stream`;
      try {
        const measured = await measure(
          ctx,
          kafka,
          client,
          run,
          label,
          {
            baseDb: `${base}_${stream === 'cluster' ? 'c' : 'p'}${n}`,
            tenants: tenants.slice(0, n),
            stream,
          },
          events,
          baseline,
        );
        results.push(measured);
      } catch (error) {
        if (error instanceof Error && error.name === 'BenchCheckError') throw error;
        const why = `${label}: ${(error as Error).message}`;
        process.stdout.write(`  STOPPED at ${why}\n`);
        stops.push(why);
      }
    }
    const atGoal = results.find(
      (one) => one.databases === GOAL.size && one.label.includes('cluster'),
    );
    if (atGoal) {
      const ratio = atGoal.window.cpuMs / atGoal.events / (baseline.window.cpuMs / baseline.events);
      const over = (atGoal.idle.rss - baseline.idle.rss) / 1048576;
      const met = ratio <= GOAL.cpuRatio && over <= GOAL.idleMb;
      line(
        `goal at ${GOAL.size} (cluster): CPU/event <= ${GOAL.cpuRatio}x, idle <= +${GOAL.idleMb} MB`,
        `${ratio.toFixed(2)}x, +${over.toFixed(1)} MB: ${met ? 'met' : 'NOT met'}`,
      );
      const overWorked = (atGoal.worked.rss - baseline.worked.rss) / 1048576;
      line('  idle RSS over it once both published (not the goal)', `+${overWorked.toFixed(1)} MB`);
    } else {
      line(`goal at ${GOAL.size} (cluster)`, 'not measured in this run');
    }
  } finally {
    await inParallel(
      [
        `${base}_single`,
        ...tenants,
        ...counts.flatMap((n) => [`${base}_c${n}_app`, `${base}_p${n}_app`]),
      ],
      4,
      (database) =>
        client
          .db(database)
          .dropDatabase()
          .then(
            () => undefined,
            () => undefined,
          ),
    );
    await client.close();
  }
  check(stops.length === 0, `stopped: ${stops.join('; ')}`);
}

export const parts: readonly BenchPart[] = [
  { name: 'tenants/relay-per-database-cost', needs: ['mongodb', 'kafka'], run: tenantsPart },
];
