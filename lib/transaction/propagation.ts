/** How a `@Transactional` method (or `TransactionRunner.run`) relates to a transaction already running. */
export enum Propagation {
  /** Join the current transaction, or start one if there is none. The default. */
  Required = 'REQUIRED',
  /** Join the current transaction; throw `TransactionPropagationError` if there is none. */
  Mandatory = 'MANDATORY',
  /** Run without a transaction; throw `TransactionPropagationError` if one is running. */
  Never = 'NEVER',
  /** Join the current transaction if there is one, else run without any. */
  Supports = 'SUPPORTS',
}
