export * from './outbox-not-initialized.error';
export * from './outbox-replica-set-required.error';
export * from './outbox-transaction-closed.error';
export * from './outbox-transaction-required.error';
export * from './transaction-propagation.error';
