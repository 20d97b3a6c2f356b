/** A relay write was not issued because this instance's lease ran out (another may lead now). */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';

  constructor() {
    super('the relay lease ran out; the write was not sent');
  }
}
