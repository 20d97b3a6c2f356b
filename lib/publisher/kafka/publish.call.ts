import type { PublishContext } from '../outbox-publisher.interface';

/**
 * One `publish` call: the signal handed to the sender, aborted when the relay gave up on the
 * call or may no longer send for it (read at each `stopped()`, right before a send).
 */
export class PublishCall {
  private readonly controller = new AbortController();
  private readonly relayGaveUp = (): void => this.controller.abort();

  constructor(private readonly context: PublishContext) {
    if (context.signal?.aborted) this.controller.abort();
    else context.signal?.addEventListener('abort', this.relayGaveUp, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  stopped(): boolean {
    if (!this.controller.signal.aborted && this.context.mayStillSend?.() === false) {
      this.controller.abort();
    }
    return this.controller.signal.aborted;
  }

  /** Forgets the relay's signal (it outlives the call). */
  end(): void {
    this.context.signal?.removeEventListener('abort', this.relayGaveUp);
  }
}
