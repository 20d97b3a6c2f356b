import { KafkaContext } from '@nestjs/microservices';
import {
  findKafkaContext,
  normalizeHeaders,
  rawValueText,
  toConsumedMessage,
} from './consumed-message';

describe('consumed message', () => {
  it('finds the KafkaContext among handler arguments', () => {
    const ctx = new KafkaContext([{}, 0, 't', {}, async () => undefined, {}] as never);
    expect(findKafkaContext([{ data: 1 }, ctx])).toBe(ctx);
    expect(findKafkaContext([ctx, 'x'])).toBe(ctx);
    expect(findKafkaContext([{ data: 1 }])).toBeUndefined();
  });

  it('reads topic, partition, offset, key and headers as text', () => {
    const ctx = new KafkaContext([
      {
        key: Buffer.from('o-1'),
        value: { a: 1 },
        offset: '12',
        timestamp: '99',
        headers: {
          ce_id: 'e-1',
          bin: Buffer.from('b'),
          many: [Buffer.from('first'), 'second'],
          none: undefined,
        },
      },
      4,
      'Order',
      {},
      async () => undefined,
      {},
    ] as never);
    const message = toConsumedMessage(ctx);
    expect(message).toEqual({
      topic: 'Order',
      partition: 4,
      offset: '12',
      key: 'o-1',
      timestamp: '99',
      headers: { ce_id: 'e-1', bin: 'b', many: 'first' },
      value: { a: 1 },
    });
  });

  it('has no prototype in its header map, so header names cannot reach Object.prototype', () => {
    const headers = normalizeHeaders(JSON.parse('{"__proto__":"x","ce_id":"e"}'));
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(headers.ce_id).toBe('e');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('keeps the raw value as text for dead letters', () => {
    expect(rawValueText(null)).toBeNull();
    expect(rawValueText('{bad')).toBe('{bad');
    expect(rawValueText(Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(rawValueText(JSON.parse('{"__proto__":{"p":1}}'))).toBe('{"__proto__":{"p":1}}');
  });
});
