import { Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { MongooseModule, getConnectionToken } from '@nestjs/mongoose';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Connection } from 'mongoose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { OutboxModule } from '../../lib';
import { OutboxConsoleModule } from '../../lib/console';
import { describeWith, mongoUriFor, uniqueName } from '../harness';
import { launchChromium } from './support/browser';

// A browser, a Nest app and the real servers on a shared machine: minutes, not seconds.
jest.setTimeout(180_000);

/** The console on a Fastify app, signed in by a header `authorize` reads. */
describeWith(['mongodb', 'chromium'], 'outbox console in the browser (Fastify)', () => {
  let app: NestFastifyApplication;
  let base: string;
  let chromium: { browser: Browser; close(): Promise<void> };
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    @Module({
      imports: [
        MongooseModule.forRoot(mongoUriFor(uniqueName('console-fastify'))),
        OutboxModule.forRoot({ relay: false, scheduledEvents: true }),
        OutboxConsoleModule.forRoot({
          path: 'ops/outbox',
          authorize: (request) => request.headers['x-console-user'] as string | undefined,
          actions: true,
        }),
      ],
    })
    class FastifyConsoleApp {}
    app = await NestFactory.create<NestFastifyApplication>(
      FastifyConsoleApp,
      new FastifyAdapter(),
      {
        logger: false,
      },
    );
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/ops/outbox`.replace('[::1]', '127.0.0.1');
    chromium = await launchChromium();
    context = await chromium.browser.newContext({ extraHTTPHeaders: { 'x-console-user': 'fran' } });
    page = await context.newPage();
  }, 240_000);
  afterAll(async () => {
    await context?.close();
    await chromium?.close();
    await app
      ?.get<Connection>(getConnectionToken())
      .dropDatabase()
      .catch(() => undefined);
    await app?.close();
  }, 60_000);

  it('serves the pages and takes a form action (purge a selected dead letter) on Fastify', async () => {
    expect((await fetch(base)).status).toBe(401);
    const db = app.get<Connection>(getConnectionToken());
    const eventId = randomUUID();
    await db.collection('outbox_dead_letters').insertOne({
      eventId,
      eventType: 'InvoiceDue',
      aggregateType: 'Invoice',
      aggregateId: 'i-1',
      payload: { n: 1 },
      occurredAt: new Date(),
      attempts: 1,
      outboxId: null,
      reason: 'rejected',
      lastError: 'refused',
      errors: [],
      deadLetteredAt: new Date(),
    });
    const overview = await page.goto(base);
    expect(overview!.status()).toBe(200);
    expect(overview!.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.locator('[data-metric="relay-dead-letters"] .value').innerText()).toBe('1');
    await page.goto(`${base}/dead-letters`);
    await page.locator(`input[name="eventId"][value="${eventId}"]`).check();
    await page.getByRole('button', { name: 'Purge selected…' }).click();
    expect(await page.locator('[data-preview-count]').getAttribute('data-preview-count')).toBe('1');
    await page.getByRole('button', { name: 'Confirm: purge 1' }).click();
    expect(await page.locator('[data-outcome-done]').getAttribute('data-outcome-done')).toBe('1');
    expect(await db.collection('outbox_dead_letters').countDocuments({ eventId })).toBe(0);
  });
});
