import { Inject, Injectable } from '@nestjs/common';
import { mongo } from 'mongoose';
import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import {
  consumerDeadLetterQuery,
  deadLetterQuery,
  type DeadLetterFilter,
} from '../../operations/dead-letter.filter';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { ConsoleSources } from '../console.sources';

export type DeadLetterKind = 'relay' | 'consumer';
export type DeadLetterRow = (OutboxDeadLetter | ConsumerDeadLetterDocument) & {
  _id: mongo.ObjectId;
};

export interface DeadLetterPage {
  rows: DeadLetterRow[];
  /** The cursor of the next page (the last row's `_id`), when there is one. */
  next?: string;
}

/**
 * Dead letters matching a filter (the CLI's and `OutboxDeadLetters`' filter, same fields), a
 * page at a time in `_id` order after a cursor (the last `_id` shown): a walk of the `_id`
 * index that applies the filter to each letter, so a page costs the letters read until it is
 * full, never a sort in memory.
 */
@Injectable()
export class DeadLetterPagesReader {
  constructor(
    private readonly sources: ConsoleSources,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  async page(
    kind: DeadLetterKind,
    filter: DeadLetterFilter,
    after?: string,
  ): Promise<DeadLetterPage> {
    const c = this.sources.collections;
    const query = kind === 'relay' ? deadLetterQuery(filter) : consumerDeadLetterQuery(filter);
    const cursor =
      after && /^[0-9a-f]{24}$/.test(after) ? { _id: { $gt: new mongo.ObjectId(after) } } : {};
    const collection = (
      kind === 'relay' ? c.deadLetters : c.consumerDeadLetters
    ) as mongo.Collection<any>;
    const rows = (await collection
      .find({ $and: [query, cursor] }, { sort: { _id: 1 }, limit: this.options.pageSize + 1 })
      .toArray()) as DeadLetterRow[];
    const more = rows.length > this.options.pageSize;
    if (more) rows.pop();
    return { rows, next: more ? rows.at(-1)!._id.toHexString() : undefined };
  }
}
