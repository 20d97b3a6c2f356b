import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { loadConfig } from '../../sample-app/config';
import { RunningSample, SAMPLE_TOPICS, startSample } from '../../sample-app/sample.app';
import { describeWith, mongoUriFor, readTopic, testServers, uniqueName, waitFor } from '../harness';

/** The sample's operations side: a trace per request carried to Kafka, /health, /metrics. */
describeWith(['mongodb', 'kafka'], 'sample app observability', () => {
  let sample: RunningSample;
  let db: Connection;

  beforeAll(async () => {
    sample = await startSample(
      loadConfig({
        MONGODB_URI: mongoUriFor(uniqueName('sample-obs')),
        KAFKA_BROKERS: testServers().kafkaBrokers.join(','),
        PORT: '0',
        SAMPLE_PARTS: 'api,relay',
      }),
      false,
    );
    db = sample.app.get<Connection>(getConnectionToken());
  });
  afterAll(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await sample?.close();
  });

  it('carries the request trace to Kafka, reports health and exposes Prometheus metrics', async () => {
    const placed = await request(sample.url!)
      .post('/orders')
      .send({ customerId: 'dana', items: [{ sku: 'PEN-1', quantity: 1, unitPrice: 2 }] })
      .expect(201);
    const stored = await db.collection('outbox').findOne({ aggregateId: placed.body.id });
    const traceId = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(stored?.headers?.traceparent)?.[1];
    expect(traceId).toBeDefined();

    const records = await readTopic(SAMPLE_TOPICS[0], { count: 1000, timeoutMs: 8000 });
    const record = records.find((r) => r.key === placed.body.id);
    expect(record?.headers.traceparent).toContain(traceId);
    expect(record?.headers.traceparent).not.toBe(stored?.headers?.traceparent); // the producer span

    await waitFor(
      async () => (await request(sample.url!).get('/health')).status === 200,
      30_000,
      'a healthy outbox',
    );
    const health = await request(sample.url!).get('/health').expect(200);
    expect(health.body.info.outbox).toMatchObject({ status: 'up', relay: { role: 'leader' } });

    const metrics = await request(sample.url!).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^outbox_relay_published_total\{[^}]*\} [1-9]/m);
    expect(metrics.text).toMatch(/^outbox_relay_leader(_ratio)?\{[^}]*\} 1/m);
    expect(metrics.text).toMatch(/^messaging_client_sent_messages_total\{[^}]*\} [1-9]/m);
  });
});
