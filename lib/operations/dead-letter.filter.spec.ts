import {
  consumerDeadLetterQuery,
  deadLetterQuery,
  DeadLetterFilterError,
} from './dead-letter.filter';
import type { DeadLetterFilter } from './dead-letter.filter';

describe('dead-letter filters', () => {
  it('match everything when empty', () => {
    expect(deadLetterQuery({})).toEqual({});
  });

  it('combine event type(s), aggregate, error text, time range and ids', () => {
    const since = new Date('2026-11-01T00:00:00Z');
    const until = new Date('2026-12-01T00:00:00Z');
    expect(
      deadLetterQuery({
        eventType: ['OrderPlaced', 'OrderCancelled'],
        aggregateType: 'Order',
        aggregateId: 'o-1',
        error: 'MESSAGE_TOO_LARGE (x)',
        since,
        until,
        eventIds: ['e-1'],
      }),
    ).toEqual({
      eventType: { $in: ['OrderPlaced', 'OrderCancelled'] },
      aggregateType: 'Order',
      aggregateId: 'o-1',
      lastError: { $regex: 'MESSAGE_TOO_LARGE \\(x\\)', $options: 'i' },
      deadLetteredAt: { $gte: since, $lt: until },
      eventId: { $in: ['e-1'] },
    });
  });

  it('read the fields of events still marked dead in the outbox when told to', () => {
    expect(
      deadLetterQuery(
        { error: /timeout/, since: new Date(0) },
        { errorField: 'deadLetter.error', timeField: 'deadLetter.at' },
      ),
    ).toEqual({ 'deadLetter.error': /timeout/, 'deadLetter.at': { $gte: new Date(0) } });
  });

  it.each<[string, unknown]>([
    ['an unknown field', { status: 'dead' }],
    ['an empty event type', { eventType: '' }],
    ['a non-string aggregate id', { aggregateId: 5 }],
    ['an invalid date', { since: new Date('nope') }],
    ['a date given as text', { until: '2026-01-01' }],
    ['an empty time range', { since: new Date(2), until: new Date(1) }],
    ['event ids that are not strings', { eventIds: [1] }],
  ])('reject %s with a typed error', (_name, filter) => {
    expect(() => deadLetterQuery(filter as DeadLetterFilter)).toThrow(DeadLetterFilterError);
  });

  it('select consumer dead letters by consumer, topic, ce_type header and key', () => {
    expect(
      consumerDeadLetterQuery({
        consumer: 'billing',
        topic: 'shop.Order',
        eventType: 'OrderPlaced',
        aggregateId: 'o-1',
        error: 'timeout',
      }),
    ).toEqual({
      status: 'dead',
      consumer: 'billing',
      topic: 'shop.Order',
      headers: { $elemMatch: { key: 'ce_type', value: { $in: ['OrderPlaced'] } } },
      key: 'o-1',
      lastError: { $regex: 'timeout', $options: 'i' },
    });
  });

  it('name the fields a kind of dead letter does not have', () => {
    expect(() => consumerDeadLetterQuery({ aggregateType: 'Order' })).toThrow(
      /"aggregateType" is not a field of consumer dead letters/,
    );
    expect(() => deadLetterQuery({ consumer: 'billing' })).toThrow(
      /"consumer" is not a field of relay dead letters/,
    );
  });
});
