import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { toKafkaMessage } from '../kafka-message.mapper';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender, TopicBatch } from './kafka.sender';

/**
 * What the relay hands the Kafka client for sample events, pinned as the exact JSON of the
 * produce call: header names in their order (kafkajs and @platformatic/kafka write them in that
 * order), values, key, partition, topic, and the size the relay counts for the byte bound. A
 * faster mapper or publisher must produce these strings unchanged.
 */
class CapturingSender implements KafkaSender {
  readonly calls: TopicBatch[][] = [];
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(): Promise<number> {
    return 6;
  }
  async send(batches: readonly TopicBatch[]): Promise<void> {
    this.calls.push([...batches]);
  }
}

const sample = (overrides: Partial<OutboxEventRecord> = {}): OutboxEventRecord => ({
  _id: 'x' as never,
  eventId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  eventType: 'OrderPlaced',
  aggregateType: 'Order',
  aggregateId: 'agg-7',
  payload: { orderId: 'o-7', seq: 7, total: 42.5, items: [{ sku: 'sku-1', qty: 2 }], note: 'é€😀' },
  occurredAt: new Date('2026-12-01T20:53:19.042Z'),
  status: 'pending',
  attempts: 0,
  ...overrides,
});

async function produced(
  events: OutboxEventRecord[],
  source?: string,
): Promise<{ json: string; sizes: number[]; statuses: string[] }> {
  const sender = new CapturingSender();
  const publisher = new KafkaPublisher(
    { brokers: ['x:1'], topicPrefix: 'shop.', ...(source ? { source } : {}) },
    sender,
  );
  const sizes = events.map((event) => publisher.sizeOf(event));
  const outcomes = await publisher.publish(events);
  return {
    json: JSON.stringify(sender.calls),
    sizes,
    statuses: outcomes.map((outcome) => outcome.status),
  };
}

describe('the produced Kafka message (pinned on the wire)', () => {
  it('is exactly this for a plain event, an event with its own headers and a stamped sequence', async () => {
    const { json, sizes, statuses } = await produced([
      sample(),
      sample({
        eventId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
        aggregateId: 'agg-8',
        sequence: 3,
        occurredAt: new Date('0999-01-02T03:04:05.006Z'),
        headers: {
          'x-tenant': 't1',
          ce_id: 'spoofed',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          skipped: 5 as never,
        },
      }),
    ]);
    expect(statuses).toEqual(['ok', 'ok']);
    expect(json).toBe(
      JSON.stringify([
        [
          {
            topic: 'shop.Order',
            messages: [
              {
                key: 'agg-7',
                value:
                  '{"orderId":"o-7","seq":7,"total":42.5,"items":[{"sku":"sku-1","qty":2}],"note":"é€😀"}',
                headers: {
                  ce_specversion: '1.0',
                  ce_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
                  ce_type: 'OrderPlaced',
                  ce_source: 'Order',
                  ce_subject: 'agg-7',
                  ce_time: '2026-12-01T20:53:19.042Z',
                  'content-type': 'application/json',
                },
                partition: 5,
              },
              {
                key: 'agg-8',
                value:
                  '{"orderId":"o-7","seq":7,"total":42.5,"items":[{"sku":"sku-1","qty":2}],"note":"é€😀"}',
                headers: {
                  'x-tenant': 't1',
                  ce_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
                  ce_specversion: '1.0',
                  ce_type: 'OrderPlaced',
                  ce_source: 'Order',
                  ce_subject: 'agg-8',
                  ce_time: '0999-01-02T03:04:05.006Z',
                  ce_sequence: '3',
                  'content-type': 'application/json',
                  // Written again from its span context (OpenTelemetry's API is installed here).
                  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
                },
                partition: 2,
              },
            ],
          },
        ],
      ]),
    );
    // UTF-8 bytes of key, value, header names and values, plus 70 per record (the headers as
    // the mapper made them, before the trace headers are written again).
    expect(sizes).toEqual([330, 418]);
  });

  it('takes a configured source', async () => {
    const { json } = await produced([sample()], '/shop/orders');
    expect(JSON.parse(json)[0][0].messages[0].headers.ce_source).toBe('/shop/orders');
  });
});

describe('ce_time (the ISO 8601 form of occurredAt, as Date#toISOString writes it)', () => {
  const timeOf = (occurredAt: unknown): string =>
    toKafkaMessage(sample({ occurredAt: occurredAt as Date })).headers.ce_time;

  it.each([
    ['1970-01-01T00:00:00.000Z', new Date(0)],
    ['1969-12-31T23:59:59.999Z', new Date(-1)],
    ['0000-01-01T00:00:00.000Z', new Date('0000-01-01T00:00:00.000Z')],
    ['0042-03-04T05:06:07.089Z', new Date('0042-03-04T05:06:07.089Z')],
    ['-000001-12-31T23:59:59.999Z', new Date('-000001-12-31T23:59:59.999Z')],
    ['9999-12-31T23:59:59.999Z', new Date('9999-12-31T23:59:59.999Z')],
    ['+010000-01-01T00:00:00.000Z', new Date('+010000-01-01T00:00:00.000Z')],
    ['+275760-09-13T00:00:00.000Z', new Date(8.64e15)],
    ['2024-02-29T12:00:00.500Z', '2024-02-29T12:00:00.500Z'],
    ['2024-02-29T12:00:00.500Z', Date.parse('2024-02-29T12:00:00.500Z')],
  ])('writes %s', (expected, occurredAt) => {
    expect(timeOf(occurredAt)).toBe(expected);
  });

  it('is the same for the same instant written twice, and for the next one', () => {
    const at = Date.parse('2026-12-01T20:53:19.042Z');
    expect([at, at, at + 1, at, at - 1000].map((ms) => timeOf(new Date(ms)))).toEqual([
      '2026-12-01T20:53:19.042Z',
      '2026-12-01T20:53:19.042Z',
      '2026-12-01T20:53:19.043Z',
      '2026-12-01T20:53:19.042Z',
      '2026-12-01T20:53:18.042Z',
    ]);
  });

  it('refuses an invalid date, as toISOString does (the event is then refused as fatal)', async () => {
    expect(() => timeOf(new Date(Number.NaN))).toThrow(RangeError);
    const { statuses } = await produced([sample({ occurredAt: new Date(Number.NaN) })]);
    expect(statuses).toEqual(['fatal']);
  });
});
