import { Model as MongooseModel } from 'mongoose';
import type {
  Aggregate,
  ClientSession,
  Connection,
  Document,
  Model,
  Query,
  Schema,
} from 'mongoose';
import { isSessionOf, mongooseTransactionSession } from './mongoose-transaction-storage';
import { contextOf } from './transaction-context';

/** Mongoose's query operations (each has query middleware); checked against Mongoose by a spec. */
export const QUERY_OPERATIONS = [
  'countDocuments',
  'distinct',
  'estimatedDocumentCount',
  'find',
  'findOne',
  'findOneAndReplace',
  'findOneAndUpdate',
  'replaceOne',
  'updateMany',
  'updateOne',
  'deleteMany',
  'deleteOne',
  'findOneAndDelete',
] as const;

/**
 * The session an operation on `connection` must use, when Mongoose's storage (one per Mongoose
 * instance, shared by all its connections) holds the session of ANOTHER connection's transaction,
 * which the driver would reject ('ClientSession must be from the same MongoClient'):
 * - the session of `connection`'s own transaction when one runs around this call (a transaction of
 *   connection A, with one of B nested in it: A's models still write in A's transaction);
 * - otherwise `null`: no session, the operation runs outside any transaction, as it would if the
 *   storage were off.
 * Undefined when Mongoose's own choice is right (no transaction, or one of `connection`).
 */
export function sessionForConnection(connection: Connection): ClientSession | null | undefined {
  const session = mongooseTransactionSession(connection);
  if (!session || isSessionOf(session, connection)) return undefined;
  const own = contextOf(connection);
  return own && !own.closed ? own.session : null;
}

type Options = Record<string, unknown> | undefined;
type BulkMethod = (this: Model<unknown>, input: unknown, options?: Options) => Promise<unknown>;

/**
 * The session to put in `options` for an operation of `connection`, or undefined to leave them
 * alone. A session the caller passed is kept; one Mongoose copied from its storage (some releases
 * copy it before the middleware runs) is not the caller's, and is replaced when it is another
 * connection's.
 */
function replacementSession(
  connection: Connection,
  options: Options,
): ClientSession | null | undefined {
  const given = options?.session;
  if (
    options &&
    Object.hasOwn(options, 'session') &&
    given !== mongooseTransactionSession(connection)
  ) {
    return undefined;
  }
  return sessionForConnection(connection);
}

/**
 * A schema plugin (registered for every schema by `OutboxModule`, see `registerConnectionSessions`)
 * that gives each operation of a model the session of the model's OWN connection. Mongoose keeps
 * one transaction storage per Mongoose instance: without this, a model of connection B called
 * inside a transaction of connection A is handed A's session and the driver rejects the call.
 * Covers queries, aggregations, `save()` (so `create()`), `insertMany()` and `bulkWrite()`; an
 * explicit `session` option is always kept.
 */
export function connectionSessionPlugin(schema: Schema): void {
  schema.pre(
    [...QUERY_OPERATIONS],
    { query: true, document: false },
    function (this: Query<unknown, unknown>) {
      const session = replacementSession(this.model.db, this.getOptions() as Options);
      if (session !== undefined) this.session(session);
    },
  );
  schema.pre('aggregate', function (this: Aggregate<unknown>) {
    const options = this.options as Options & object;
    const session = replacementSession(this.model().db, options);
    if (session !== undefined) options.session = session;
  });
  // Mongoose 8 calls a pre hook declaring parameters with (next, options), Mongoose 9 with (options).
  schema.pre('save', function (this: Document, first?: unknown, second?: unknown) {
    const next = typeof first === 'function' ? (first as () => void) : undefined;
    const options = (next ? second : first) as Options;
    const model = this.constructor as Partial<Model<unknown>>;
    if (this.$session() == null && model.db) {
      const session = replacementSession(model.db, options);
      if (session) this.$session(session);
      else if (session === null && options) options.session = null;
    }
    next?.();
  });
  for (const name of ['insertMany', 'bulkWrite'] as const) {
    // A static of the schema's own keeps working (wrapped); else Mongoose's Model method runs.
    const inner =
      (schema.statics[name] as BulkMethod | undefined) ??
      (MongooseModel as unknown as Record<string, BulkMethod>)[name];
    schema.static(name, function (this: Model<unknown>, input: unknown, options?: Options) {
      const session = replacementSession(this.db, options);
      return inner.call(this, input, session === undefined ? options : { ...options, session });
    });
  }
}

const registered = new WeakSet<object>();

/**
 * Registers `connectionSessionPlugin` once per Mongoose instance. Global plugins apply to models
 * compiled afterwards, so `OutboxModule.forRoot()` registers it when it is called, before the app's
 * `MongooseModule.forFeature()` models are compiled.
 */
export function registerConnectionSessions(mongoose: {
  plugin(fn: (schema: Schema) => void): unknown;
}): void {
  if (registered.has(mongoose)) return;
  registered.add(mongoose);
  mongoose.plugin(connectionSessionPlugin);
}
