import { Controller, Get, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  OutboxHealthCheckError,
  OutboxHealthIndicator,
  OutboxModule,
  OutboxRelay,
  PublisherConfigurationError,
} from '../../lib';
import type { OutboxPublisher } from '../../lib';
import { describeWith, mongoUriFor, testServers, waitFor } from '../harness';
import { relayTestBed, testLogLevels, testRelayOptions } from '../relay/support/relay-app';

/** A health endpoint as an app writes it with @nestjs/terminus. */
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly outbox: OutboxHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.outbox.check('outbox', { maxLagMs: 1000 })]);
  }
}

describeWith(['mongodb', 'kafka'], 'outbox health', () => {
  const bed = relayTestBed('health');

  it('is healthy while the relay leads and follows the stream, and reports its checkpoint', async () => {
    const relay = await bed.startRelay();
    // Written once the stream follows, so its change event moves the saved position.
    await waitFor(() => relay.relay?.status().stream === 'following', 30_000, 'the stream');
    await bed.writer.orders.place('h-1', 'agg-1', 1);
    await waitFor(
      async () =>
        (await bed.writer.connection.collection('outbox').countDocuments({ status: 'pending' })) ===
        0,
      30_000,
      'the event to be published',
    );
    const indicator = relay.app.get(OutboxHealthIndicator);
    await waitFor(
      async () => (await indicator.health()).checkpoint.saved,
      30_000,
      'a saved checkpoint',
    );
    const report = await indicator.health();
    expect(report.healthy).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.relay).toMatchObject({ role: 'leader', stream: 'following' });
    expect(report.lag.oldestPendingAgeMs).toBeUndefined();
    expect(report.checkpoint.ageMs).toBeGreaterThanOrEqual(0);
    expect(report.checkpoint.ageMs).toBeLessThan(30_000);
    // The oplog figure itself is asserted on real MongoDB below; here: a figure or a reason.
    if (report.oplog.available) expect(report.oplog.windowMs).toBeGreaterThanOrEqual(0);
    else expect(report.oplog.reason).toMatch(/local\.oplog\.rs/);
    await expect(indicator.isHealthy()).resolves.toBe(true);
    await expect(indicator.check('outbox')).resolves.toMatchObject({
      outbox: { status: 'up', relay: { role: 'leader' } },
    });
    await relay.close();
  });

  it('is down with the reason while a configuration error pauses publishing, up once events are accepted', async () => {
    // Defect (issue 30, 7): a configuration error was an outage ("broker unavailable"), health up.
    let refusing = true;
    const publisher: OutboxPublisher = {
      connect: async () => undefined,
      disconnect: async () => undefined,
      publish: async (events) =>
        events.map(() =>
          refusing
            ? {
                status: 'retriable',
                scope: 'broker',
                error: new PublisherConfigurationError(
                  'UNSUPPORTED_VERSION',
                  'Kafka did not accept the event for topic "Order": The version of API is not supported',
                ),
              }
            : { status: 'ok' },
        ),
    };
    const relay = await bed.startRelay({ ...testRelayOptions(bed.prefix), publisher });
    await waitFor(() => relay.relay?.status().stream === 'following', 30_000, 'the stream');
    await bed.writer.orders.place('c-1', 'agg-c', 1);
    const indicator = relay.app.get(OutboxHealthIndicator);
    await waitFor(
      () => relay.relay?.status().configurationError !== undefined,
      30_000,
      'the configuration error',
    );
    const report = await indicator.health();
    expect(report.healthy).toBe(false);
    expect(report.problems).toContain(
      'Publishing is paused by a configuration error: UNSUPPORTED_VERSION: Kafka did not accept the ' +
        'event for topic "Order": The version of API is not supported.',
    );
    expect(report.relay?.configurationError).toMatch(/^configuration error: UNSUPPORTED_VERSION/);
    refusing = false;
    await waitFor(
      () => relay.relay?.status().configurationError === undefined,
      30_000,
      'the pause to end',
    );
    expect((await indicator.health()).problems.join(' ')).not.toContain('configuration error');
    await relay.close();
  });

  it('is down when the oldest pending event is older than maxLagMs, and says so', async () => {
    // Only the writer runs now: nothing publishes.
    await bed.writer.orders.place('h-2', 'agg-2', 1);
    const indicator = bed.writer.app.get(OutboxHealthIndicator);
    await waitFor(
      async () => ((await indicator.health()).lag.oldestPendingAgeMs ?? 0) > 1000,
      10_000,
      'the event to wait a second',
    );
    const report = await indicator.health({ maxLagMs: 1000 });
    expect(report.healthy).toBe(false);
    expect(report.relay).toBeUndefined(); // the writer app has no relay
    expect(report.problems.join(' ')).toMatch(/oldest pending event is \d+ s old \(limit 1 s\)/);
    const error = await indicator.check('outbox', { maxLagMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxHealthCheckError);
    expect((error as OutboxHealthCheckError).isHealthCheckError).toBe(true);
    expect((error as OutboxHealthCheckError).causes.outbox.status).toBe('down');
  });

  it('serves GET /health through @nestjs/terminus: 503 while events wait, 200 once the relay caught up', async () => {
    @Module({
      imports: [
        MongooseModule.forRoot(mongoUriFor(bed.db)),
        OutboxModule.forRoot({ relay: { ...testRelayOptions(bed.prefix), autoStart: false } }),
        TerminusModule,
      ],
      controllers: [HealthController],
    })
    class HealthApp {}
    const moduleRef = await Test.createTestingModule({ imports: [HealthApp] }).compile();
    const app: INestApplication = moduleRef.createNestApplication({ logger: testLogLevels() });
    await app.init();
    try {
      const stale = await request(app.getHttpServer()).get('/health');
      expect(stale.status).toBe(503);
      expect(stale.body.error.outbox.status).toBe('down');
      expect(stale.body.error.outbox.problems).toEqual([
        'The relay of this instance is not running.',
        expect.stringMatching(/^The oldest pending event is \d+ s old \(limit 1 s\)\.$/),
      ]);

      await app.get(OutboxRelay).start(); // publishes the waiting event
      await waitFor(
        async () => (await request(app.getHttpServer()).get('/health')).status === 200,
        30_000,
        'the health endpoint to turn 200',
      );
      const healthy = await request(app.getHttpServer()).get('/health');
      expect(healthy.body).toMatchObject({
        status: 'ok',
        info: { outbox: { status: 'up', relay: { role: 'leader' } } },
      });
    } finally {
      await app.close();
    }
  });
});

/**
 * The oplog-window figure needs a real oplog: PoppyDB has none (its change stream history is
 * in memory), so there the report says why instead.
 */
describeWith(['real-mongodb', 'kafka'], 'outbox health against the oplog window', () => {
  const bed = relayTestBed('health-oplog');

  it('compares the saved resume token with the oplog window, and warns before the relay falls off it', async () => {
    const relay = await bed.startRelay();
    await bed.writer.orders.place('w-1', 'agg-1', 1);
    const indicator = relay.app.get(OutboxHealthIndicator);
    await waitFor(async () => (await indicator.health()).checkpoint.saved, 30_000, 'a checkpoint');
    const report = await indicator.health();
    expect(report.oplog).toMatchObject({ available: true, source: 'local.oplog.rs' });
    if (!report.oplog.available) throw new Error(report.oplog.reason);
    expect(report.oplog.windowMs).toBeGreaterThan(0);
    expect(report.checkpoint.positionTimeFrom).toBe('resume-token');
    expect(report.oplog.used).toBeGreaterThanOrEqual(0);
    expect(report.oplog.used).toBeLessThan(1);
    expect(report.healthy).toBe(true);

    // Once the relay stops, its position ages; any share of the window above the limit is a warning.
    await relay.close();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stale = await bed.writer.app.get(OutboxHealthIndicator).health({ maxOplogWindowUse: 0 });
    expect(stale.healthy).toBe(false);
    expect(stale.problems.join(' ')).toMatch(/of the oplog window .* falls off the oplog in about/);
    expect(testServers().mongoKind).toBe('mongodb');
  });
});
