import { OutboxError } from '../../common/errors/outbox.error';

/** A propagation rule was broken: `Mandatory` without a transaction, `Never` inside one, ... */
export class TransactionPropagationError extends OutboxError {
  constructor(
    readonly propagation: string,
    problem: string,
    readonly method?: string,
  ) {
    super(
      `${method ? `${method}: ` : ''}propagation ${propagation}: ${problem}`,
      'OUTBOX_TRANSACTION_PROPAGATION',
      { propagation, method },
    );
  }
}
