import type { MetricData } from '@opentelemetry/sdk-metrics';
import { OutboxHealthIndicator } from '../../lib';
import { eventSlot } from '../../lib/events/event-slot';
import { partitionOfSlot } from '../../lib/relay/ports/partition-layout';
import { describeWith, waitFor } from '../harness';
import { installOpenTelemetry } from '../harness/opentelemetry';
import { relayTestBed, testRelayOptions } from '../relay/support/relay-app';

const PARTITIONS = 3;

/** `count` aggregate ids of type Order whose events fall in each partition. */
function aggregatesPerPartition(count: number): string[][] {
  const byPartition: string[][] = Array.from({ length: PARTITIONS }, () => []);
  for (let n = 0; byPartition.some((ids) => ids.length < count); n++) {
    const id = `agg-${n}`;
    const ids = byPartition[partitionOfSlot(eventSlot('Order', id), PARTITIONS)];
    if (ids.length < count) ids.push(id);
  }
  return byPartition;
}

/** Value of each data point of `metric` by its `outbox.relay.partition` attribute. */
function byPartition(metric: MetricData | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (metric?.dataPoints ?? []).map((point) => [
      String(point.attributes['outbox.relay.partition']),
      point.value,
    ]),
  );
}

/**
 * An app with `relay: { partitions: 3 }` and the OpenTelemetry SDK: alone, it holds the three
 * partitions, its health reports each (held by it, following, a saved position) and is up,
 * and the relay's pending and lag gauges carry the partition. Once it stopped, an app without
 * a relay reports the three partitions as held by nobody (degraded), and goes down on the lag.
 */
describeWith(['mongodb', 'kafka'], 'outbox health and metrics with partitions', () => {
  const otel = installOpenTelemetry();
  const bed = relayTestBed('health-parts');
  afterAll(() => otel.shutdown());

  it('reports the three partitions as owned and healthy, and the metrics carry the partition', async () => {
    const relay = await bed.startRelay(testRelayOptions(bed.prefix, { partitions: PARTITIONS }));
    const owner = () => relay.relay!.status().partitions?.find((p) => p.owned)?.owner;
    await waitFor(
      () =>
        relay.relay!.status().partitions?.filter((p) => p.owned && p.stream === 'following')
          .length === PARTITIONS,
      30_000,
      'the relay to hold and follow the three partitions',
    );

    // Events in every partition, so that each saves a position.
    const aggregates = aggregatesPerPartition(2);
    let seq = 0;
    for (const ids of aggregates) {
      for (const id of ids) await bed.writer.orders.place(`hp-${seq}`, id, seq++);
    }
    const outbox = bed.writer.connection.collection('outbox');
    await waitFor(
      async () => (await outbox.countDocuments({ status: 'pending' })) === 0,
      30_000,
      'the events to be published',
    );
    const indicator = relay.app.get(OutboxHealthIndicator);
    await waitFor(
      async () =>
        (await indicator.health()).partitions?.each.every((p) => p.checkpoint.saved) === true,
      30_000,
      "each partition's saved position",
    );

    const report = await indicator.health();
    expect(report.healthy).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.degraded).toEqual([]);
    expect(report.relay).toMatchObject({ role: 'leader', stream: 'following' });
    expect(report.partitions).toMatchObject({
      count: PARTITIONS,
      configured: PARTITIONS,
      owned: [0, 1, 2],
      unheld: [],
    });
    expect(report.partitions!.generation).toBeGreaterThanOrEqual(1);
    for (const [p, part] of report.partitions!.each.entries()) {
      expect(part).toMatchObject({
        partition: p,
        owner: owner(),
        owned: true,
        stream: 'following',
        checkpoint: { saved: true },
      });
      expect(part.fencing).toEqual(expect.any(Number));
      expect(part.oldestPendingAgeMs).toBeUndefined();
      expect(part.checkpoint.ageMs).toBeLessThan(30_000);
    }
    // The oldest position of the three decides.
    const ages = report.partitions!.each.map((p) => p.checkpoint.ageMs!);
    expect(report.checkpoint.partition).toBe(ages.indexOf(Math.max(...ages)));
    await expect(indicator.check('outbox')).resolves.toMatchObject({
      outbox: { status: 'up', partitions: { owned: [0, 1, 2] }, degraded: [] },
    });

    // Metrics: pending and lag per partition (refreshed by each partition's sweep), three held.
    let metrics = new Map<string, MetricData>();
    await waitFor(
      async () => {
        metrics = new Map((await otel.collectMetrics()).map((m) => [m.descriptor.name, m]));
        const pending = byPartition(metrics.get('outbox.relay.pending'));
        return JSON.stringify(pending) === JSON.stringify({ '0': 0, '1': 0, '2': 0 });
      },
      30_000,
      'no pending event in each of the three partitions, by their sweeps',
    );
    const pendingPoint = metrics.get('outbox.relay.pending')!.dataPoints[0];
    expect(pendingPoint.attributes).toEqual({
      'outbox.relay.name': 'default',
      'outbox.relay.partition': expect.any(Number),
    });
    const owned = metrics.get('outbox.relay.partitions.owned');
    expect(owned?.dataPoints).toEqual([
      expect.objectContaining({
        value: PARTITIONS,
        attributes: { 'outbox.relay.name': 'default' },
      }),
    ]);
    expect(metrics.get('outbox.relay.leader')?.dataPoints[0].value).toBe(1);
    // At least once each (a duplicate publish counts again).
    expect(metrics.get('outbox.relay.published')?.dataPoints[0].value).toBeGreaterThanOrEqual(seq);

    await relay.close();

    // Nobody relays now: an app without a relay sees the three partitions unheld (degraded),
    // and goes down once an event waits longer than maxLagMs.
    const writerHealth = bed.writer.app.get(OutboxHealthIndicator);
    const idle = await writerHealth.health();
    expect(idle.healthy).toBe(true);
    expect(idle.partitions).toMatchObject({ owned: [], unheld: [0, 1, 2] });
    expect(idle.partitions!.configured).toBeUndefined();
    expect(idle.degraded).toEqual([
      'No relay holds partitions 0, 1, 2 of 3 (no live lease): their events wait until a live relay takes them (at its next membership tick).',
    ]);
    await bed.writer.orders.place('hp-late', aggregates[1][0], seq++);
    await waitFor(
      async () => ((await writerHealth.health()).lag.oldestPendingAgeMs ?? 0) > 1000,
      10_000,
      'the event to wait a second',
    );
    const late = await writerHealth.health({ maxLagMs: 1000 });
    expect(late.healthy).toBe(false);
    expect(late.problems).toEqual([
      expect.stringMatching(/^The oldest pending event is \d+ s old \(limit 1 s\)\.$/),
    ]);
    expect(late.partitions!.each[1].oldestPendingAgeMs).toBeGreaterThan(1000);
    expect(late.partitions!.each[0].oldestPendingAgeMs).toBeUndefined();
  });

  it('two relays: each holds its share and is healthy, and names the other as the holder of the rest', async () => {
    const options = testRelayOptions(bed.prefix, { partitions: PARTITIONS });
    const first = await bed.startRelay(options);
    const second = await bed.startRelay(options);
    const held = (app: typeof first) =>
      app
        .relay!.status()
        .partitions?.filter((p) => p.owned)
        .map((p) => p.partition) ?? [];
    // Settled: each partition held by one of them, following (a hand-over is over).
    await waitFor(
      () => {
        const statuses = [first, second].map((app) => app.relay!.status().partitions ?? []);
        const a = held(first);
        const b = held(second);
        return (
          a.length >= 1 &&
          b.length >= 1 &&
          [...a, ...b].sort().join() === '0,1,2' &&
          statuses.every((list) => list.every((p) => !p.owned || p.stream === 'following'))
        );
      },
      30_000,
      'the two relays to share the three partitions',
    );
    const reports = await Promise.all(
      [first, second].map((app) => app.app.get(OutboxHealthIndicator).health()),
    );
    const owners = [first, second].map(
      (app) => app.relay!.status().partitions!.find((p) => p.owned)!.owner!,
    );
    for (const [i, report] of reports.entries()) {
      expect(report.healthy).toBe(true);
      expect(report.degraded).toEqual([]);
      expect(report.partitions!.unheld).toEqual([]);
      expect(report.partitions!.owned).toEqual(held([first, second][i]));
      for (const part of report.partitions!.each) {
        expect(part.owner).toBe(part.owned ? owners[i] : owners[1 - i]);
        expect(part.stream).toBe(part.owned ? 'following' : 'stopped');
      }
    }
    // (No metrics here: both apps observe the one SDK of this process with the same attributes.)
  });
});
