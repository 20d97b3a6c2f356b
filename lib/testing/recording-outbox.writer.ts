import type { ClientSession } from 'mongoose';
import type { NewOutboxEvent } from '../documents/outbox-event.document';
import type { OutboxEventWriter } from '../events/outbox-event.writer';
import type { EmittedEvent } from './emitted-event';
import type { FakeSession } from './fakes/fake-connection';

/**
 * The outbox writer of `OutboxTestingModule`: keeps each transaction's events in memory, and
 * records them once that transaction committed (never those of an attempt that rolled back).
 */
export class RecordingOutboxWriter implements OutboxEventWriter {
  readonly events: EmittedEvent[] = [];
  private transactions = 0;

  async insert(events: NewOutboxEvent[], session: ClientSession): Promise<void> {
    const fake = session as unknown as FakeSession;
    if (!fake.inTransaction())
      throw new Error('RecordingOutboxWriter: insert outside a transaction');
    const rows = events.map((event) => ({ ...event }));
    fake.onCommit(() => {
      const transaction = ++this.transactions;
      this.events.push(...rows.map((row) => ({ ...row, transaction, delivered: false })));
    });
  }

  async ensureIndexes(): Promise<void> {}

  clear(): void {
    this.events.length = 0;
    this.transactions = 0;
  }
}
