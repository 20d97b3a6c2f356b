import { describeError } from '../common/errors/describe-error';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { RelayLogger } from './ports/relay-logger';

/**
 * The publisher's connection as a relay node holds it: connected in the background when the node
 * starts (a broker that is down only delays publishing: `publish()` reconnects), disconnected once
 * when it stops, whether the first connect succeeded or not.
 */
export class PublisherConnection {
  private opened = false;

  constructor(
    private readonly publisher: OutboxPublisher,
    private readonly logger: RelayLogger,
  ) {}

  open(): void {
    this.publisher.connect().then(
      () => (this.opened = true),
      (error: unknown) => {
        this.opened = true; // publish() reconnects; close() must still disconnect
        this.logger.warn(
          `The publisher could not connect yet (${describeError(error)}); events wait and are retried.`,
        );
      },
    );
  }

  async close(): Promise<void> {
    if (!this.opened) return;
    this.opened = false;
    await this.publisher.disconnect();
  }
}
