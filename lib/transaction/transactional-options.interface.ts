import type { mongo } from 'mongoose';
import type { Propagation } from './propagation';

/** Options of `@Transactional()` and `TransactionRunner.run()`. */
export interface TransactionalOptions {
  /** Default `Propagation.Required` (join or start). */
  propagation?: Propagation;
  /**
   * Read/write concern, read preference, `maxCommitTimeMS` of a transaction this call STARTS
   * (ignored when it joins one).
   */
  transactionOptions?: mongo.TransactionOptions;
  /**
   * Which `OutboxModule` runs the transaction, by its `connectionName`. Only needed when an app
   * registers several OutboxModules (one per Mongoose connection).
   */
  connectionName?: string;
}
