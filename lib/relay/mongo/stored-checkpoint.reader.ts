import type { mongo } from 'mongoose';
import type { StoredCheckpoint } from '../ports/relay-state.store';
import { relayStateIds, type RelayCheckpointDoc } from '../../documents/relay-state.document';
import { relayCollection } from './relay-collections';

/**
 * The checkpoint a relay saved (its resume token and when), read by anyone (health checks,
 * other instances): undefined when that relay never saved one.
 */
export async function readStoredCheckpoint(
  db: mongo.Db,
  collection: string,
  relayName: string,
): Promise<StoredCheckpoint | undefined> {
  const checkpointId = relayStateIds(relayName).checkpoint;
  return (await readStoredCheckpoints(db, collection, [checkpointId])).get(checkpointId);
}

/**
 * Several checkpoints in one read, by `_id` (e.g. every partition's
 * `checkpoint:<name>:g<generation>:p<partition>`): the ones never saved are absent.
 */
export async function readStoredCheckpoints(
  db: mongo.Db,
  collection: string,
  checkpointIds: readonly string[],
): Promise<Map<string, StoredCheckpoint>> {
  const found = new Map<string, StoredCheckpoint>();
  if (checkpointIds.length === 0) return found;
  const docs = await relayCollection<RelayCheckpointDoc>(db, collection)
    .find({ _id: { $in: [...checkpointIds] } }, { projection: { token: 1, savedAt: 1 } })
    .toArray();
  for (const doc of docs) {
    found.set(doc._id, {
      token: doc.token === null ? undefined : doc.token,
      savedAt: doc.savedAt,
    });
  }
  return found;
}
