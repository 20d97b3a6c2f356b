import { Types } from 'mongoose';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { withOlderUnslotted } from './unslotted-in-page';

/** An event of aggregate `aggregate`; `slot` missing: written by a version before slots. */
function event(id: string, aggregate: string, slot?: number, sequence?: number): OutboxEventRecord {
  return {
    _id: new Types.ObjectId(id.padStart(24, '0')),
    eventId: `evt-${id}`,
    eventType: 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId: aggregate,
    payload: {},
    occurredAt: new Date(0),
    status: 'pending',
    attempts: 0,
    ...(slot === undefined ? {} : { slot }),
    ...(sequence === undefined ? {} : { sequence }),
  };
}

/** The last two hex digits of each `_id` (ids are made from two digits, in `_id` order). */
const ids = (page: OutboxEventRecord[]) => page.map((e) => String(e._id).slice(-2));

describe('a partition’s drain page with the events written without a slot', () => {
  it('puts an unslotted event before the later events of its aggregate (one read: 1, 2, 4 and 3)', () => {
    // The read: unslotted first (a missing slot sorts first), then the range in drain order.
    const read = [event('03', 'a'), event('01', 'a', 7), event('02', 'a', 7), event('04', 'a', 7)];
    expect(ids(withOlderUnslotted(read, 10))).toEqual(['01', '02', '03', '04']);
  });

  it('leaves out unslotted events of other aggregates and later than the page’s of theirs', () => {
    const read = [
      event('05', 'a'), // later than every event of `a` in the page: comes by the stream
      event('06', 'other'), // another aggregate (maybe another partition's)
      event('01', 'a', 7),
      event('02', 'a', 7),
    ];
    expect(ids(withOlderUnslotted(read, 10))).toEqual(['01', '02']);
  });

  it('keeps `limit` events with a slot, and only the unslotted ones older than those', () => {
    const read = [
      event('02', 'a'),
      event('04', 'b'),
      event('01', 'a', 7),
      event('03', 'a', 7),
      event('05', 'b', 9),
    ];
    const page = withOlderUnslotted(read, 2);
    expect(ids(page)).toEqual(['01', '02', '03']);
    expect(page[page.length - 1].slot).toBe(7); // the next page starts after an event with a slot
  });

  it('orders by sequence first, as the aggregate order does', () => {
    const read = [event('09', 'a', undefined, 2), event('01', 'a', 7, 1), event('02', 'a', 7, 3)];
    expect(ids(withOlderUnslotted(read, 10))).toEqual(['01', '09', '02']);
  });

  it('is the read itself when nothing lacks a slot', () => {
    const read = [event('01', 'a', 7), event('02', 'b', 9)];
    expect(withOlderUnslotted(read, 10)).toEqual(read);
  });
});
