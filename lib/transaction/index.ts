export * from './errors';
export * from './propagation';
export * from './transactional.decorator';
export type { TransactionalOptions } from './transactional-options.interface';
export * from './transaction.runner';
