import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { loadConfig } from './config';
import { startSample } from './sample.app';

/**
 * `npm run demo`: starts the sample (HTTP + relay + consumer in one process) against the servers
 * started by scripts/run-with-servers.js, places orders and a cancellation over HTTP, and follows
 * each event: order saved -> event in the outbox -> published to Kafka -> applied by the consumer.
 * Ends by itself: exit 0 when every event was saved, published and applied once, 1 otherwise
 * (also when the whole demo takes longer than `DEMO_TIMEOUT_MS`). It prints the URL of the sample's
 * outbox console; with `DEMO_KEEP=1` it keeps the app (and its data) running until Ctrl-C. With OUTBOX_TEST_MONGODB=optional
 * on a machine without MongoDB it says so and exits 0 without running.
 */
const TIMEOUT_MS = 60_000;
const DEMO_TIMEOUT_MS = 180_000;

function databaseUri(uri: string, db: string): string {
  const url = new URL(uri);
  url.pathname = `/${db}`;
  return url.toString();
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined>): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${TIMEOUT_MS / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function post(url: string, body: unknown): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`POST ${url} -> ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function main() {
  const runId = Date.now().toString(36);
  const env = process.env;
  if (env.OUTBOX_TEST_MONGODB_KIND === 'none') {
    console.log(
      `demo: skipped, no MongoDB replica set in this run (${env.OUTBOX_TEST_MONGODB_REASON || 'none'}); ` +
        'set MONGODB_URI to run it',
    );
    process.exit(0);
  }
  const deadline = setTimeout(() => {
    console.error(`demo failed: not finished after ${DEMO_TIMEOUT_MS / 1000}s`);
    process.exit(1);
  }, DEMO_TIMEOUT_MS).unref();
  const config = loadConfig({
    ...env,
    MONGODB_URI: databaseUri(env.MONGODB_URI ?? '', `orders_demo_${runId}`),
    PORT: '0',
    SAMPLE_CONSUMER_GROUP: `order-summaries-demo-${runId}`,
    // Its own topic: on a broker kept from an earlier run, `Order` holds that run's events too.
    SAMPLE_TOPIC_PREFIX: `demo-${runId}.`,
  });
  console.log(
    `demo: MongoDB ${env.OUTBOX_TEST_MONGODB_KIND ?? 'mongodb'}, Kafka ${config.kafkaBrokers.join(',')}`,
  );
  const sample = await startSample(config, false);
  const db = sample.app.get<Connection>(getConnectionToken());
  const outbox = db.collection('outbox');
  const summaries = db.collection('order_summaries');
  let failed = false;

  const follow = async (
    label: string,
    eventType: string,
    orderId: string,
    savedAt: number,
    check: (s: any) => boolean,
  ) => {
    const event = await waitFor(`${eventType} in the outbox`, () =>
      outbox.findOne({ aggregateId: orderId, eventType }),
    );
    console.log(
      `  ${label}: event in outbox       eventId=${event.eventId} status=${event.status}`,
    );
    const published = await waitFor(`${eventType} published`, () =>
      outbox.findOne({ eventId: event.eventId, status: 'published' }),
    );
    const publishedMs = published.publishedAt.getTime() - savedAt;
    console.log(
      `  ${label}: published to Kafka    topic=${config.topicPrefix}Order key=${orderId} +${publishedMs} ms after the HTTP call`,
    );
    const summary = await waitFor(`${eventType} applied`, async () => {
      const s = await summaries.findOne({ orderId });
      return s && check(s) ? s : null;
    });
    console.log(
      `  ${label}: applied by consumer   summary status=${summary.status} appliedEvents=${summary.appliedEvents} +${Date.now() - savedAt} ms`,
    );
  };

  try {
    const orders = [
      { customerId: 'alice', items: [{ sku: 'BOOK-1', quantity: 2, unitPrice: 12.5 }] },
      { customerId: 'bob', items: [{ sku: 'MUG-7', quantity: 1, unitPrice: 8 }] },
      { customerId: 'alice', items: [{ sku: 'PEN-3', quantity: 10, unitPrice: 1.2 }] },
    ];
    const placed: any[] = [];
    for (const [i, body] of orders.entries()) {
      const started = Date.now();
      const order = await post(`${sample.url}/orders`, body);
      console.log(
        `order #${i + 1}: saved                 id=${order.id} total=${order.total} (${Date.now() - started} ms)`,
      );
      await follow(
        `order #${i + 1}`,
        'OrderCreated',
        order.id,
        started,
        (s) => s.status === 'placed',
      );
      placed.push(order);
    }
    const started = Date.now();
    const cancelled = await post(`${sample.url}/orders/${placed[1].id}/cancel`, {
      reason: 'changed my mind',
    });
    console.log(
      `cancel order #2: saved           id=${cancelled.id} status=${cancelled.status} (${Date.now() - started} ms)`,
    );
    await follow(
      'cancel order #2',
      'OrderCancelled',
      cancelled.id,
      started,
      (s) => s.status === 'cancelled',
    );

    const stats = await db.collection('customer_stats').find().sort({ customerId: 1 }).toArray();
    console.log(
      'read model customer_stats:',
      stats
        .map((s) => `${s.customerId}: placed ${s.ordersPlaced}, cancelled ${s.ordersCancelled}`)
        .join('; '),
    );
    const bad = await summaries.countDocuments({ appliedEvents: { $gt: 2 } });
    if (bad > 0) throw new Error(`${bad} summaries applied an event more than once`);
    // The read model holds this run's orders, each counted once: alice placed two, bob placed
    // one and cancelled it.
    const counted = stats
      .map((s) => `${s.customerId} ${s.ordersPlaced}/${s.ordersCancelled}`)
      .join(', ');
    if (counted !== 'alice 2/0, bob 1/1')
      throw new Error(`customer_stats counted ${counted}, expected alice 2/0, bob 1/1`);
    console.log('demo: done, every event saved, published and applied once');
    process.stdout.write(
      `demo: outbox console at ${sample.url}/outbox (user operator, password ${process.env.SAMPLE_CONSOLE_PASSWORD ? '$SAMPLE_CONSOLE_PASSWORD' : 'outbox'})\n`,
    );
    if (env.DEMO_KEEP === '1') {
      clearTimeout(deadline);
      process.stdout.write('demo: DEMO_KEEP=1, running until Ctrl-C\n');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } catch (error) {
    failed = true;
    console.error(`demo failed: ${error instanceof Error ? error.message : error}`);
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await sample.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(`demo failed: ${error instanceof Error ? error.stack : error}`);
  process.exit(1);
});
