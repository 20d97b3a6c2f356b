import type { mongo } from 'mongoose';
import type { StoredCheckpoint } from '../ports/relay-state.store';
import { relayCollection } from './relay-collections';

/** `_id`s of a relay's documents in `collections.relayState`. */
export function relayStateIds(relayName: string): { lease: string; checkpoint: string } {
  return { lease: `lease:${relayName}`, checkpoint: `checkpoint:${relayName}` };
}

/**
 * The checkpoint a relay saved (its resume token and when), read by anyone (health checks,
 * other instances): undefined when that relay never saved one.
 */
export async function readStoredCheckpoint(
  db: mongo.Db,
  collection: string,
  relayName: string,
): Promise<StoredCheckpoint | undefined> {
  const doc = await relayCollection<{ _id: string; token?: unknown; savedAt?: Date }>(
    db,
    collection,
  ).findOne({ _id: relayStateIds(relayName).checkpoint });
  if (!doc) return undefined;
  return {
    token: doc.token === null ? undefined : doc.token,
    savedAt: doc.savedAt,
  };
}
