import type { Types } from 'mongoose';
import { toKafkaMessage } from './kafka-message.mapper';

const event = {
  _id: 'x' as unknown as Types.ObjectId,
  eventId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: 'o-42',
  payload: { id: 'o-42', total: 12.5 },
  occurredAt: new Date('2025-01-02T03:04:05.678Z'),
  status: 'pending' as const,
  attempts: 0,
  headers: { traceparent: '00-abc-def-01', 'x-tenant': 't1', ce_id: 'spoofed' },
};

describe('toKafkaMessage (CloudEvents Kafka binding, binary mode)', () => {
  it('keys by aggregateId, JSON value, envelope headers winning over user headers', () => {
    expect(toKafkaMessage(event)).toEqual({
      key: 'o-42',
      value: '{"id":"o-42","total":12.5}',
      headers: {
        traceparent: '00-abc-def-01',
        'x-tenant': 't1',
        ce_specversion: '1.0',
        ce_id: event.eventId,
        ce_type: 'OrderCreated',
        ce_source: 'Order',
        ce_subject: 'o-42',
        ce_time: '2025-01-02T03:04:05.678Z',
        'content-type': 'application/json',
      },
    });
  });
  it('sends a stamped sequence as ce_sequence, and no such header without one', () => {
    expect(toKafkaMessage({ ...event, sequence: 7 }).headers.ce_sequence).toBe('7');
    expect(toKafkaMessage(event).headers).not.toHaveProperty('ce_sequence');
  });
  it("sends the document's tenant as ce_tenant, over a user header of that name, and none without one", () => {
    const spoofing = { ...event, headers: { ...event.headers, ce_tenant: 'spoofed' } };
    expect(toKafkaMessage({ ...spoofing, tenant: 'acme' }).headers.ce_tenant).toBe('acme');
    expect(toKafkaMessage(event).headers).not.toHaveProperty('ce_tenant');
  });
  it('takes a configured source', () => {
    expect(toKafkaMessage(event, '/orders').headers.ce_source).toBe('/orders');
    expect(toKafkaMessage(event, (e) => `/svc/${e.aggregateType}`).headers.ce_source).toBe(
      '/svc/Order',
    );
  });
});
