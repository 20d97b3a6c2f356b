import { Injectable } from '@nestjs/common';
import { describeEmitted, matchesEmitted } from './emitted-event';
import type { EmittedEvent, EmittedEventFilter } from './emitted-event';
import { OutboxExpectationError } from './outbox-testing.errors';
import { RecordingOutboxWriter } from './recording-outbox.writer';

type Filter = EmittedEventFilter | ((event: EmittedEvent) => boolean);

/**
 * What the code under test emitted, for assertions: only events of transactions that committed,
 * in commit order. Inject it from a module built with `OutboxTestingModule`.
 */
@Injectable()
export class OutboxTesting {
  constructor(private readonly writer: RecordingOutboxWriter) {}

  /** The committed events (of one type, or matching a filter), in commit order. */
  emitted(filter: string | Filter = {}): EmittedEvent[] {
    const select = typeof filter === 'string' ? { eventType: filter } : filter;
    return this.writer.events.filter((event) => matchesEmitted(event, select));
  }

  /** Events committed but not delivered by `drain()` yet. */
  pending(): EmittedEvent[] {
    return this.writer.events.filter((event) => !event.delivered);
  }

  /**
   * Asserts that a committed transaction emitted `eventType` (matching `filter`, e.g. a part of
   * its payload) and returns the event; `times` asserts how many. Throws
   * `OutboxExpectationError` listing what was emitted otherwise.
   */
  expectEmitted(
    eventType: string,
    filter: Omit<EmittedEventFilter, 'eventType'> = {},
    times?: number,
  ): EmittedEvent {
    const found = this.emitted({ ...filter, eventType });
    const ok = times === undefined ? found.length > 0 : found.length === times;
    if (!ok) {
      const wanted = Object.keys(filter).length > 0 ? ` matching ${JSON.stringify(filter)}` : '';
      const count = times === undefined ? 'at least once' : `${times} time(s)`;
      throw new OutboxExpectationError(
        `Expected ${eventType}${wanted} to be emitted ${count}, found ${found.length}. Emitted:\n` +
          describeEmitted(this.writer.events),
      );
    }
    return found[0];
  }

  /** Asserts that no committed transaction emitted `eventType` (or any event, without one). */
  expectNotEmitted(eventType?: string): void {
    const found = eventType ? this.emitted(eventType) : this.writer.events;
    if (found.length > 0) {
      throw new OutboxExpectationError(
        `Expected ${eventType ?? 'no event'} not to be emitted, found ${found.length}:\n` +
          describeEmitted(found),
      );
    }
  }

  /** Forgets every recorded event (call it in `beforeEach`). */
  clear(): void {
    this.writer.clear();
  }
}
