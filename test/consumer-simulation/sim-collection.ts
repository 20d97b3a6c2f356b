/**
 * An in-memory stand-in for the few `mongo.Collection` calls the consumer's stores make
 * (`MongoProcessedEventStore`, `MongoConsumerFailureStore`), so the property suite runs their
 * real code: `insertOne`, `findOne`, `findOneAndUpdate`, `updateOne`, `deleteOne`, with
 * top-level equality filters (a `null` matches a missing field, as in MongoDB) and `$ne`, `$in`,
 * `$nin`, `$exists`, `$type`; updates with `$set`, `$setOnInsert`, `$unset`, `$inc`, `$push`
 * (`$each`, `$slice`); upserts; unique indexes (code 11000); writes with `{ session }` staged in
 * a `SimSession` and applied when it commits. Anything else throws `UnsupportedBySimulation`,
 * naming what to add here, rather than behaving differently from MongoDB.
 */
export type Doc = Record<string, unknown>;

export class UnsupportedBySimulation extends Error {
  constructor(what: string) {
    super(
      `the consumer simulation's collection does not support ${what}: add it to sim-collection.ts`,
    );
    this.name = 'UnsupportedBySimulation';
  }
}

/** A transaction: writes staged until `commit`; a write after the session ended is refused. */
export class SimSession {
  readonly staged: Array<{ collection: SimCollection; doc: Doc }> = [];
  ended = false;

  stage(collection: SimCollection, doc: Doc): void {
    if (this.ended) {
      throw Object.assign(new Error('Cannot use a session that has ended'), {
        name: 'MongoExpiredSessionError',
      });
    }
    this.staged.push({ collection, doc });
  }
}

export interface UniqueIndex {
  fields: string[];
  /** Only documents matching this filter are indexed (a partial index). */
  partial?: Doc;
}

/** Called before every operation: throws to simulate an unavailable server. */
export type FaultHook = (collection: string, operation: string) => void;

export class SimCollection {
  readonly docs: Doc[] = [];

  constructor(
    readonly collectionName: string,
    private readonly unique: UniqueIndex[],
    private readonly fault: FaultHook,
  ) {}

  async insertOne(doc: Doc, options: { session?: unknown } = {}): Promise<{ acknowledged: true }> {
    this.fault(this.collectionName, 'insertOne');
    const session = options.session as SimSession | undefined;
    const pending = session
      ? session.staged.filter((s) => s.collection === this).map((s) => s.doc)
      : [];
    this.checkUnique(doc, [...this.docs, ...pending]);
    if (session) session.stage(this, { ...doc });
    else this.docs.push({ ...doc });
    return { acknowledged: true };
  }

  /**
   * `ordered: true` (the driver's default) only: one command that inserts in order and stops at
   * the first duplicate key, which it reports with the driver's code 11000. In a transaction that
   * error aborts it, so what was staged before it never commits either.
   */
  async insertMany(
    docs: Doc[],
    options: { session?: unknown; ordered?: boolean } = {},
  ): Promise<{ acknowledged: true; insertedCount: number }> {
    if (options.ordered === false) throw new UnsupportedBySimulation('insertMany ordered: false');
    this.fault(this.collectionName, 'insertMany');
    const session = options.session as SimSession | undefined;
    for (const doc of docs) {
      const pending = session
        ? session.staged.filter((s) => s.collection === this).map((s) => s.doc)
        : [];
      this.checkUnique(doc, [...this.docs, ...pending]);
      if (session) session.stage(this, { ...doc });
      else this.docs.push({ ...doc });
    }
    return { acknowledged: true, insertedCount: docs.length };
  }

  /** `find(filter, { projection })` read with `toArray()` (committed documents only). */
  find(filter: Doc, options: { projection?: Doc } = {}) {
    return {
      toArray: async (): Promise<Doc[]> => {
        this.fault(this.collectionName, 'find');
        return this.docs
          .filter((d) => matches(d, filter))
          .map((d) => project(d, options.projection));
      },
    };
  }

  /** Applies a committed session's staged document (uniqueness checked again, as at commit). */
  commitStaged(doc: Doc): void {
    this.checkUnique(doc, this.docs);
    this.docs.push(doc);
  }

  async findOne(filter: Doc): Promise<Doc | null> {
    this.fault(this.collectionName, 'findOne');
    const found = this.docs.find((d) => matches(d, filter));
    return found ? structuredClone(found) : null;
  }

  async findOneAndUpdate(
    filter: Doc,
    update: Doc,
    options: { upsert?: boolean; returnDocument?: 'before' | 'after'; projection?: Doc } = {},
  ): Promise<Doc | null> {
    this.fault(this.collectionName, 'findOneAndUpdate');
    const { before, after } = this.update(filter, update, options.upsert ?? false);
    const result = options.returnDocument === 'after' ? after : before;
    return result ? project(result, options.projection) : null;
  }

  async updateOne(
    filter: Doc,
    update: Doc,
    options: { upsert?: boolean } = {},
  ): Promise<{ matchedCount: number; upsertedCount: number }> {
    this.fault(this.collectionName, 'updateOne');
    const { before, after } = this.update(filter, update, options.upsert ?? false);
    return { matchedCount: before ? 1 : 0, upsertedCount: !before && after ? 1 : 0 };
  }

  async deleteOne(filter: Doc): Promise<{ deletedCount: number }> {
    this.fault(this.collectionName, 'deleteOne');
    const index = this.docs.findIndex((d) => matches(d, filter));
    if (index === -1) return { deletedCount: 0 };
    this.docs.splice(index, 1);
    return { deletedCount: 1 };
  }

  private update(filter: Doc, update: Doc, upsert: boolean): { before?: Doc; after?: Doc } {
    for (const operator of Object.keys(update)) {
      if (!UPDATE_OPERATORS.has(operator))
        throw new UnsupportedBySimulation(`the update operator ${operator}`);
    }
    const existing = this.docs.find((d) => matches(d, filter));
    if (existing) {
      const before = structuredClone(existing);
      const next = applyUpdate(structuredClone(existing), update, false);
      this.checkUnique(
        next,
        this.docs.filter((d) => d !== existing),
      );
      Object.keys(existing).forEach((key) => delete existing[key]);
      Object.assign(existing, next);
      return { before, after: structuredClone(existing) };
    }
    if (!upsert) return {};
    const seed: Doc = {};
    for (const [key, value] of Object.entries(filter)) {
      if (!isOperatorObject(value)) seed[key] = value;
    }
    const created = applyUpdate(seed, update, true);
    this.checkUnique(created, this.docs);
    this.docs.push(created);
    return { after: structuredClone(created) };
  }

  private checkUnique(doc: Doc, others: Doc[]): void {
    for (const index of this.unique) {
      if (index.partial && !matches(doc, index.partial)) continue;
      const clash = others.some(
        (other) =>
          (!index.partial || matches(other, index.partial)) &&
          index.fields.every((field) => same(other[field] ?? null, doc[field] ?? null)),
      );
      if (clash) {
        throw Object.assign(
          new Error(
            `E11000 duplicate key error collection: ${this.collectionName} index: ${index.fields.join('_')}`,
          ),
          { code: 11000, name: 'MongoServerError' },
        );
      }
    }
  }
}

const UPDATE_OPERATORS = new Set(['$set', '$setOnInsert', '$unset', '$inc', '$push']);

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Date) &&
    !Array.isArray(value) &&
    Object.keys(value).some((key) => key.startsWith('$'))
  );
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b;
}

export function matches(doc: Doc, filter: Doc): boolean {
  return Object.entries(filter).every(([field, condition]) => {
    if (field.startsWith('$')) {
      if (field === '$and') return (condition as Doc[]).every((f) => matches(doc, f));
      if (field === '$or') return (condition as Doc[]).some((f) => matches(doc, f));
      throw new UnsupportedBySimulation(`the query operator ${field}`);
    }
    if (field.includes('.')) throw new UnsupportedBySimulation(`the dotted path ${field}`);
    const value = doc[field];
    if (!isOperatorObject(condition)) {
      return condition === null ? value === null || value === undefined : same(value, condition);
    }
    return Object.entries(condition).every(([operator, operand]) => {
      switch (operator) {
        case '$ne':
          return operand === null ? value !== null && value !== undefined : !same(value, operand);
        case '$in':
          return (operand as unknown[]).some((o) => same(value, o));
        case '$nin':
          return !(operand as unknown[]).some((o) => same(value, o));
        case '$exists':
          return (value !== undefined) === operand;
        case '$type':
          if (operand !== 'string') throw new UnsupportedBySimulation(`$type ${String(operand)}`);
          return typeof value === 'string';
        default:
          throw new UnsupportedBySimulation(`the query operator ${operator}`);
      }
    });
  });
}

function applyUpdate(doc: Doc, update: Doc, inserting: boolean): Doc {
  const set = (update.$set ?? {}) as Doc;
  const onInsert = inserting ? ((update.$setOnInsert ?? {}) as Doc) : {};
  for (const [field, value] of Object.entries({ ...onInsert, ...set })) {
    if (field.includes('.')) throw new UnsupportedBySimulation(`the dotted path ${field}`);
    doc[field] = structuredClone(value);
  }
  for (const field of Object.keys((update.$unset ?? {}) as Doc)) delete doc[field];
  for (const [field, by] of Object.entries((update.$inc ?? {}) as Record<string, number>)) {
    doc[field] = ((doc[field] as number | undefined) ?? 0) + by;
  }
  for (const [field, push] of Object.entries((update.$push ?? {}) as Doc)) {
    const list = [...((doc[field] as unknown[] | undefined) ?? [])];
    if (isOperatorObject(push)) {
      list.push(...structuredClone((push.$each as unknown[]) ?? []));
      const slice = push.$slice as number | undefined;
      doc[field] =
        slice === undefined ? list : slice < 0 ? list.slice(slice) : list.slice(0, slice);
    } else {
      list.push(structuredClone(push));
      doc[field] = list;
    }
  }
  return doc;
}

function project(doc: Doc, projection: Doc | undefined): Doc {
  if (!projection) return doc;
  const out: Doc = {};
  for (const [field, include] of Object.entries(projection)) if (include) out[field] = doc[field];
  return out;
}
