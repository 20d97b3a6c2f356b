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

  private guard(): void {
    if (!this.leaseValid()) throw new LeaseLostError();
  }

  async markPublished(ids: readonly unknown[], at: Date): Promise<void> {
    this.guard();
    await this.store.markPublished(ids, at, this.fence);
  }

  async markHeld(ids: readonly unknown[], retryAt: Date): Promise<void> {
    this.guard();
    await this.store.markHeld(ids, retryAt, this.fence);
  }

  async recordFailure(event: OutboxEventRecord, failure: FailureRecord): Promise<void> {
    this.guard();
    await this.store.recordFailure(event, failure, this.fence);
  }

  async markDead(event: OutboxEventRecord, record: DeadLetterRecord): Promise<void> {
    this.guard();
    await this.store.markDead(event, record, this.fence);
  }

  async copyToDeadLetters(event: MarkedDead): Promise<void> {
    this.guard();
    await this.store.copyToDeadLetters(event);
  }

  async removeDead(id: unknown): Promise<void> {
    this.guard();
    await this.store.removeDead(id, this.fence);
  }
}
