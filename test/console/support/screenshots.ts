/**
 * `npm run console:screenshots`: starts the sample app (with its console) on the servers
 * scripts/run-with-servers.js started, gives it a little of everything (orders placed and
 * published, a backlog, a relay dead letter, scheduled events), and writes a screenshot of each
 * page to docs/images/console-<page>.png with Debian's Chromium.
 */
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { OutboxEmitter, TransactionRunner } from '../../../lib';
import { loadConfig } from '../../../sample-app/config';
import { startSample } from '../../../sample-app/sample.app';
import { launchChromium, signedIn } from './browser';

const OUT = join(__dirname, '..', '..', '..', 'docs', 'images');

async function main() {
  const runId = Date.now().toString(36);
  const uri = new URL(process.env.MONGODB_URI ?? '');
  uri.pathname = `/console_screens_${runId}`;
  const sample = await startSample(
    loadConfig({
      ...process.env,
      MONGODB_URI: uri.toString(),
      PORT: '0',
      SAMPLE_CONSUMER_GROUP: `screens-${runId}`,
      SAMPLE_TOPIC_PREFIX: `screens-${runId}.`,
    }),
    false,
  );
  const db = sample.app.get<Connection>(getConnectionToken());
  const emitter = sample.app.get(OutboxEmitter);
  const runner = sample.app.get(TransactionRunner);
  let orderEvent = '';
  try {
    for (const customerId of ['ann', 'bo', 'cy']) {
      const order = (await (
        await fetch(`${sample.url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            customerId,
            items: [{ sku: 'BOOK-1', quantity: 2, unitPrice: 10 }],
          }),
        })
      ).json()) as { id: string };
      orderEvent ||= (await db.collection('outbox').findOne({ aggregateId: order.id }))!.eventId;
    }
    await runner.run(async () => {
      for (let i = 0; i < 6; i++) {
        emitter.emit(
          {
            eventType: 'OrderReminder',
            aggregateType: 'Order',
            aggregateId: `reminder-${i}`,
            payload: { i },
          },
          { availableAt: new Date(Date.now() + (i + 1) * 600_000) },
        );
      }
    });
    await db.collection('outbox_dead_letters').insertOne({
      eventId: randomUUID(),
      eventType: 'OrderShipped',
      aggregateType: 'Shipment',
      aggregateId: 's-1',
      payload: { carrier: 'post' },
      occurredAt: new Date(),
      attempts: 10,
      outboxId: null,
      reason: 'max-attempts',
      lastError: 'This server does not host this topic-partition',
      errors: [],
      deadLetteredAt: new Date(),
    });
    await new Promise((r) => setTimeout(r, 12_000)); // published, applied, a few chart samples
    mkdirSync(OUT, { recursive: true });
    const chromium = await launchChromium();
    try {
      const context = await signedIn(chromium.browser);
      const page = await context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      const base = `${sample.url}/outbox`;
      const shots: Array<[string, string]> = [
        // The overview last: its script reloads it every 5 s, which would cut a next navigation.
        ['event', `${base}/events?eventId=${orderEvent}`],
        ['dead-letters', `${base}/dead-letters`],
        ['scheduled', `${base}/scheduled`],
        ['overview', base],
      ];
      for (const [name, url] of shots) {
        await page.goto(url);
        await page.screenshot({ path: join(OUT, `console-${name}.png`), fullPage: false });
        process.stdout.write(`console:screenshots: docs/images/console-${name}.png\n`);
      }
    } finally {
      await chromium.close();
    }
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await sample.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`console:screenshots failed: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
