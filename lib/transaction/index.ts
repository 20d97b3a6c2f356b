// What lib/index.ts takes from the transactions.
export * from './errors/outbox-not-initialized.error';
export * from './errors/outbox-replica-set-required.error';
export * from './errors/outbox-transaction-closed.error';
export * from './errors/outbox-transaction-required.error';
export * from './errors/transaction-propagation.error';
export { Propagation } from './propagation';
export { Transactional } from './transactional.decorator';
export type { TransactionalOptions } from './transactional-options.interface';
export { TransactionRunner } from './transaction.runner';
