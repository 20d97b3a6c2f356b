import { Inject, Injectable } from '@nestjs/common';
import { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { ConsoleSources } from '../console.sources';

export interface ScheduledPage {
  rows: OutboxDoc[];
  /** Cursor of the next page: the last row's due time and `_id`. */
  next?: string;
}

/**
 * Pending scheduled events by due time, a page after a cursor `(availableAt, _id)`: the filter
 * is the partial filter of `outbox_relay_scheduled` and the sort its key, so a page reads
 * `pageSize` index entries.
 */
@Injectable()
export class ScheduledReader {
  constructor(
    private readonly sources: ConsoleSources,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  async page(after?: string): Promise<ScheduledPage> {
    const base = { status: 'pending', availableAt: { $exists: true } };
    const [at, id] = (after ?? '').split('_');
    const cursor =
      after && /^\d+$/.test(at) && /^[0-9a-f]{24}$/.test(id)
        ? {
            $or: [
              { availableAt: { $gt: new Date(Number(at)) } },
              { availableAt: new Date(Number(at)), _id: { $gt: new mongo.ObjectId(id) } },
            ],
          }
        : {};
    const rows = await this.sources.collections.outbox
      .find({ $and: [base, cursor] } as object, {
        sort: { availableAt: 1, _id: 1 },
        limit: this.options.pageSize + 1,
        projection: { payload: 0, headers: 0, errorHistory: 0 },
      })
      .toArray();
    const more = rows.length > this.options.pageSize;
    if (more) rows.pop();
    const last = rows.at(-1);
    return {
      rows,
      next: more && last ? `${last.availableAt!.getTime()}_${String(last._id)}` : undefined,
    };
  }
}
