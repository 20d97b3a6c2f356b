import { groupBy } from '../../common/group-by';
import { aggregateKey } from '../../documents/outbox-event.document';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { OutboxPublisher, PublishOutcome } from '../../publisher/outbox-publisher.interface';

/** A publisher whose answer per event is scripted; records what was accepted, in order. */
export class ScriptedPublisher implements OutboxPublisher {
  readonly accepted: OutboxEventRecord[] = [];
  readonly calls: OutboxEventRecord[][] = [];
  script: (event: OutboxEventRecord) => PublishOutcome = () => ({ status: 'ok' });
  /** Where events go (`destinationsOf`); none by default. */
  destinations?: (event: OutboxEventRecord) => readonly string[];
  delayMs = 0;
  /** Highest number of calls in flight at once that contained events of one aggregate. */
  maxConcurrentPerAggregate = 0;
  private readonly inFlight = new Map<string, number>();

  async connect(): Promise<void> {}

  destinationsOf(event: OutboxEventRecord): readonly string[] {
    return this.destinations?.(event) ?? [];
  }

  async publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    this.calls.push([...events]);
    const aggregates = [...new Set(events.map(aggregateKey))];
    for (const key of aggregates) {
      const count = (this.inFlight.get(key) ?? 0) + 1;
      this.inFlight.set(key, count);
      this.maxConcurrentPerAggregate = Math.max(this.maxConcurrentPerAggregate, count);
    }
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      const held = new Map<string, PublishOutcome>();
      return events.map((event) => {
        const key = aggregateKey(event);
        const blocking = held.get(key);
        if (blocking) return blocking;
        const outcome = this.script(event);
        if (outcome.status === 'ok') this.accepted.push(event);
        else if (outcome.status === 'retriable') held.set(key, outcome);
        return outcome;
      });
    } finally {
      for (const key of aggregates) this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
    }
  }

  async disconnect(): Promise<void> {}

  /** eventIds accepted, per aggregate, in acceptance order. */
  acceptedByAggregate(): Map<string, string[]> {
    return groupBy(
      this.accepted,
      (event) => event.aggregateId,
      (event) => event.eventId,
    );
  }
}
