import { OutboxError } from './outbox.error';

/** Bad module options: thrown at bootstrap, naming the option and how to fix it. */
export class OutboxOptionsError extends OutboxError {
  constructor(
    readonly option: string,
    problem: string,
    fix: string,
  ) {
    super(`Invalid OutboxModule option "${option}": ${problem}. ${fix}`, 'OUTBOX_INVALID_OPTIONS', {
      option,
    });
  }
}
