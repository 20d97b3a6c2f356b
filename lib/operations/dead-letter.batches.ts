import type { Logger } from '@nestjs/common';
import type { mongo } from 'mongoose';
import { OutboxError } from '../common/errors/outbox.error';
import { OutboxTenantNotResolvedError } from '../tenants/outbox-tenant-not-resolved.error';
import { targetOf, type TenantTarget } from '../tenants/tenant.resolution';
import type { TenantsSetting } from '../tenants/tenants.resolved';
import type { DeadLetterFilter } from './dead-letter.filter';
import type { DeadLetterPurgeResult } from './dead-letter.results';

/** `batchSize` of a requeue, checked (default 100). */
export function requeueBatchSize(batchSize = 100): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new OutboxError(
      `requeueMany: batchSize must be an integer from 1 to 10000, got ${String(batchSize)}.`,
      'OUTBOX_INVALID_ARGUMENT',
      { batchSize },
    );
  }
  return batchSize;
}

/**
 * Listing, counting and purging of one kind of dead letter, by filter. With tenants, a view of
 * the service made by `forTenant` works in that tenant's database, on that tenant's letters only.
 */
export abstract class DeadLetterOperations<Letter extends mongo.Document> {
  protected abstract readonly logger: Logger;
  protected abstract get deadLetters(): mongo.Collection<Letter>;
  /** A `forTenant` view's tenant and database; undefined: the app's database. */
  protected target?: TenantTarget;
  /** What a `forTenant` view adds to every query (the tenant's letters only). */
  private tenantScope?: Record<string, unknown>;

  constructor(
    private readonly queryOf: (filter: DeadLetterFilter) => mongo.Filter<Letter>,
    /** What the purge log line calls them. */
    private readonly noun: string,
  ) {}

  /** The database query of `filter` (within the view's tenant, if any). */
  protected query(filter: DeadLetterFilter): mongo.Filter<Letter> {
    const query = this.queryOf(filter);
    return this.tenantScope ? ({ $and: [query, this.tenantScope] } as mongo.Filter<Letter>) : query;
  }

  /**
   * A view of this service on `tenant`'s letters, in `databaseOf(tenant)`; `scope` selects the
   * tenant's letters there (several tenants may share a database).
   */
  protected tenantView(
    tenants: TenantsSetting,
    tenant: string,
    scope: (tenant: string) => Record<string, unknown>,
  ): this {
    const what = `${this.constructor.name}.forTenant()`;
    if (!tenants) {
      throw new OutboxTenantNotResolvedError(what, 'the module has no tenants option', tenant);
    }
    const view = Object.create(this) as this;
    view.target = targetOf(tenants, tenant, what);
    view.tenantScope = scope(tenant);
    return view;
  }

  /** Dead letters matching `filter`, oldest first, at most `limit`. */
  list(filter: DeadLetterFilter = {}, limit = 100): Promise<Letter[]> {
    return this.deadLetters
      .find(this.query(filter), {
        sort: { deadLetteredAt: 1, _id: 1 },
        limit,
        projection: { _id: 0 },
      })
      .toArray() as Promise<Letter[]>;
  }

  /** How many dead letters match `filter`. */
  count(filter: DeadLetterFilter = {}): Promise<number> {
    return this.deadLetters.countDocuments(this.query(filter));
  }

  /**
   * Deletes the dead letters matching `filter`, for good (a relay dead letter's event is then
   * never published). With `dryRun`, only counts them.
   */
  async purge(
    filter: DeadLetterFilter = {},
    options: { dryRun?: boolean } = {},
  ): Promise<DeadLetterPurgeResult> {
    const query = this.query(filter);
    if (options.dryRun) {
      return { dryRun: true, matched: await this.deadLetters.countDocuments(query), deleted: 0 };
    }
    const { deletedCount } = await this.deadLetters.deleteMany(query);
    this.logger.log(`${deletedCount} ${this.noun} purged`);
    return { dryRun: false, matched: deletedCount, deleted: deletedCount };
  }
}

/**
 * The documents after `last` in the ascending order of `fields` (the last of which is unique):
 * the cursor of the next page. A missing or null value sorts first, so after it comes any value.
 */
function afterInOrder(
  fields: readonly string[],
  last: Record<string, unknown>,
): Record<string, unknown> {
  return {
    $or: fields.map((field, i) => {
      const clause: Record<string, unknown> = {};
      for (const earlier of fields.slice(0, i)) clause[earlier] = last[earlier] ?? null;
      const value = last[field];
      clause[field] = value === undefined || value === null ? { $ne: null } : { $gt: value };
      return clause;
    }),
  };
}

/**
 * The documents `query` selects, in pages of `batchSize`, in the ascending order of `fields`
 * (the last unique). Each page is read after the last document of the previous one, so the
 * query stays the same size whatever was done with the pages before: documents that left the
 * selection meanwhile and documents that stayed are both behind the cursor.
 */
export async function* pagesInOrder<T extends object>(
  collection: mongo.Collection<any>,
  query: Record<string, unknown>,
  fields: readonly string[],
  batchSize: number,
  projection?: Record<string, 1>,
): AsyncGenerator<T[]> {
  const sort = Object.fromEntries(fields.map((field) => [field, 1 as const]));
  const keep = projection && { ...projection, ...sort };
  let last: T | undefined;
  for (;;) {
    const page = (await collection
      .find(
        last ? { $and: [query, afterInOrder(fields, last as Record<string, unknown>)] } : query,
        {
          sort,
          limit: batchSize,
          ...(keep ? { projection: keep } : {}),
        },
      )
      .toArray()) as T[];
    if (page.length === 0) return;
    yield page;
    if (page.length < batchSize) return;
    last = page[page.length - 1];
  }
}
