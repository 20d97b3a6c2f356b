import { Types } from 'mongoose';

/**
 * An ObjectId that sorts after `last` (the latest `_id` of the pending scheduled events an event
 * waits for), made from a fresh one of this process: the fresh one if it sorts after already;
 * else its process part and counter (bytes 4-11: unique to this process, the counter grows with
 * each id it makes) behind `last`'s second, or the second after it. An ObjectId sorts by its bytes,
 * the second first (https://www.mongodb.com/docs/manual/reference/method/ObjectId/). Without
 * `aggregateSequence` the relay reads an aggregate in `_id` order, and ids made in one second by
 * two processes sort by their process part, not by commit: an event committed after the one it
 * waits for, by another process, could otherwise be read, and published, first.
 */
export function idAfter(last: Types.ObjectId, fresh = new Types.ObjectId()): Types.ObjectId {
  if (compareIds(fresh, last) > 0) return fresh;
  const bytes = Buffer.from(fresh.id);
  const second = last.getTimestamp().getTime() / 1000;
  bytes.writeUInt32BE(second, 0);
  const sameSecond = new Types.ObjectId(bytes);
  if (compareIds(sameSecond, last) > 0) return sameSecond;
  bytes.writeUInt32BE(second + 1, 0);
  return new Types.ObjectId(bytes);
}

function compareIds(a: Types.ObjectId, b: Types.ObjectId): number {
  return Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
}
