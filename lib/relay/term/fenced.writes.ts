import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { LeaseLostError } from '../lease/lease-lost.error';
import type {
  DeadLetterRecord,
  FailureRecord,
  MarkedDead,
  OutboxRelayStore,
  RelayFence,
} from '../ports/outbox-relay.store';

/** The writes of one leadership term (what the engine and the sweep may change). */
export type RelayWrites = Pick<FencedWrites, keyof FencedWrites>;

/**
 * Every write of a term carries its fencing number (the store conditions it on the document's
 * stamp) and is only sent while the lease is valid on this process's elapsed-time clock, which
 * ends before the lease expires on the server. A relay that lost its lease sends no write; one
 * it sent just before may still land, but never on a document a newer leader already wrote.
 */
export class FencedWrites {
  constructor(
    private readonly store: OutboxRelayStore,
    private readonly fence: RelayFence,
    private readonly leaseValid: () => boolean,
  ) {}

  markPublished(ids: readonly unknown[], at: Date): Promise<void> {
    return this.send(() => this.store.markPublished(ids, at, this.fence));
  }

  markHeld(ids: readonly unknown[], retryAt: Date): Promise<void> {
    return this.send(() => this.store.markHeld(ids, retryAt, this.fence));
  }

  recordFailure(event: OutboxEventRecord, failure: FailureRecord): Promise<void> {
    return this.send(() => this.store.recordFailure(event, failure, this.fence));
  }

  markDead(event: OutboxEventRecord, record: DeadLetterRecord): Promise<void> {
    return this.send(() => this.store.markDead(event, record, this.fence));
  }

  copyToDeadLetters(event: MarkedDead): Promise<void> {
    return this.send(() => this.store.copyToDeadLetters(event));
  }

  removeDead(id: unknown): Promise<void> {
    return this.send(() => this.store.removeDead(id, this.fence));
  }

  /** Sends `write` only while the lease is valid. */
  private async send(write: () => Promise<void>): Promise<void> {
    if (!this.leaseValid()) throw new LeaseLostError();
    await write();
  }
}
