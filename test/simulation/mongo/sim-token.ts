/**
 * A change stream position in the simulated oplog (MongoDB's resume token): the oplog entry
 * (`pos`, one per transaction), the insert within it (`index`; `AFTER_ALL` for a position past
 * the whole entry), and the entry's time (the oplog window is by time).
 */
export interface SimToken {
  pos: number;
  index: number;
  time: number;
}

const AFTER_ALL = 1_000_000;

/** The position just past every insert of entry `pos`. */
export function highWater(pos: number, time: number): SimToken {
  return { pos, index: AFTER_ALL, time };
}

/** Whether `position` comes strictly after `token`. */
export function afterToken(position: SimToken, token: SimToken): boolean {
  return position.pos > token.pos || (position.pos === token.pos && position.index > token.index);
}

/** Whether `position` comes before `token` (or is it, with `inclusive`). */
export function tokenBefore(position: SimToken, token: SimToken, inclusive: boolean): boolean {
  if (position.pos !== token.pos) return position.pos < token.pos;
  return inclusive ? position.index <= token.index : position.index < token.index;
}

/**
 * The later of two positions; of two at the same place, the one seen later (a post-batch
 * position moves on with the cluster time while nothing is written).
 */
export function laterToken(a: SimToken, b: SimToken): SimToken {
  if (afterToken(b, a)) return b;
  if (afterToken(a, b)) return a;
  return b.time > a.time ? b : a;
}

/** A token the relay handed back (it is opaque to the relay, so check its shape). */
export function asSimToken(value: unknown): SimToken {
  const token = value as Partial<SimToken> | null;
  if (
    token === null ||
    typeof token !== 'object' ||
    typeof token.pos !== 'number' ||
    typeof token.index !== 'number' ||
    typeof token.time !== 'number'
  ) {
    throw new Error(`not a simulated resume token: ${JSON.stringify(value)}`);
  }
  return { pos: token.pos, index: token.index, time: token.time };
}
