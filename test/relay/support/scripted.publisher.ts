import type { OutboxEventRecord } from '../../../lib/common/envelope';
import type {
  OutboxPublisher,
  PublishOutcome,
} from '../../../lib/publisher/outbox-publisher.interface';

/** A publisher whose answer per event is scripted; records what was accepted, in order. */
export class ScriptedPublisher implements OutboxPublisher {
  readonly accepted: OutboxEventRecord[] = [];
  readonly calls: OutboxEventRecord[][] = [];
  script: (event: OutboxEventRecord) => PublishOutcome = () => ({ status: 'ok' });
  delayMs = 0;

  async connect(): Promise<void> {}

  async publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    this.calls.push([...events]);
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const held = new Set<string>();
    return events.map((event) => {
      const key = `${event.aggregateType}/${event.aggregateId}`;
      if (held.has(key)) return { status: 'retriable', error: new Error('held back') };
      const outcome = this.script(event);
      if (outcome.status === 'ok') this.accepted.push(event);
      else if (outcome.status === 'retriable') held.add(key);
      return outcome;
    });
  }

  async disconnect(): Promise<void> {}

  /** eventIds accepted, per aggregate, in acceptance order. */
  acceptedByAggregate(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const event of this.accepted) {
      const list = out.get(event.aggregateId) ?? [];
      list.push(event.eventId);
      out.set(event.aggregateId, list);
    }
    return out;
  }
}
