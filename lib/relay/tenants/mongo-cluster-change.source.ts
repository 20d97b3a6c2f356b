import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import type { ChangeCursor, ChangeSource, ResumeToken } from '../ports/change-source';
import type { SlotRange } from '../ports/partition-layout';
import {
  openChangeCursor,
  type StreamChange,
  type StreamScope,
} from '../mongo/mongo-change.source';
import { streamedToPartition } from '../mongo/slot-range.filters';

/**
 * One change stream over the whole deployment (`client.watch()`,
 * https://www.mongodb.com/docs/manual/changeStreams/#watch-a-collection--database--or-deployment),
 * filtered by the server to inserts into the outbox collection of the given databases. Each
 * change carries its database (`ns.db`). A dropped database does not invalidate it (only a
 * collection's or a database's own stream is), so only inserts are matched.
 * It needs the `changeStream` and `find` actions on every followed database.
 *
 * With a `range` (one relay partition), only the inserts whose slot lies in it, and those
 * without a slot, each then kept only when its aggregate's slot lies in it: as one database's
 * partition stream (`MongoChangeSource`), for every followed database.
 */
export class MongoClusterChangeSource implements ChangeSource {
  private readonly pipeline: mongo.Document[];
  private readonly scope: StreamScope;

  constructor(
    private readonly client: mongo.MongoClient,
    outboxCollection: string,
    databases: readonly string[],
    private readonly options: { batchSize: number; idleMs: number },
    range?: SlotRange,
  ) {
    const match: mongo.Document = {
      operationType: 'insert',
      'ns.coll': outboxCollection,
      'ns.db': { $in: [...databases] },
    };
    if (range) match.$or = streamedToPartition(range);
    this.pipeline = [{ $match: match }];
    const followed = new Set(databases);
    this.scope = {
      follows: (ns) => ns?.coll === outboxCollection && followed.has(ns.db ?? ''),
      range,
    };
  }

  open(from: ResumeToken | undefined): Promise<ChangeCursor> {
    return openChangeCursor(
      (options) => this.client.watch<OutboxDoc, StreamChange>(this.pipeline, options),
      this.client.db('admin'),
      from,
      this.options,
      this.scope,
    );
  }
}
