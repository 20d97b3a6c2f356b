import type { ClientSession } from 'mongoose';
import type { NewOutboxEvent } from '../documents/outbox-event.document';
import type { OutboxEventWriter } from '../events/outbox-event.writer';
import type { CancelScheduledResult } from '../events/schedule/cancel-result';
import type { ScheduleRequest } from '../events/schedule/emit-schedule';
import type { ScheduleQuery, ScheduleSnapshot } from '../events/schedule/schedule.resolver';
import type { EmittedEvent } from './emitted-event';
import { fakeSessionOf } from './fakes/fake-connection';
import { cancelInMemory, scheduleSnapshotOf } from './in-memory-schedule';
import { TestingClock } from './testing.clock';

/**
 * The outbox writer of `OutboxTestingModule`: keeps each transaction's events in memory, and
 * records them once that transaction committed (never those of an attempt that rolled back).
 * The schedule read and cancel work on the recorded events, at the testing clock's time.
 */
export class RecordingOutboxWriter implements OutboxEventWriter {
  readonly events: EmittedEvent[] = [];
  readonly clock = new TestingClock();
  private transactions = 0;

  async insert(
    events: NewOutboxEvent[],
    session: ClientSession,
    schedules: readonly ScheduleRequest[] = [],
  ): Promise<void> {
    const fake = fakeSessionOf(session, 'RecordingOutboxWriter: insert');
    const rows = events.map((event, i) => ({ ...event, ...requested(schedules[i]) }));
    fake.onCommit(() => {
      const transaction = ++this.transactions;
      this.events.push(...rows.map((row) => ({ ...row, transaction, delivered: false })));
    });
  }

  async readSchedule(query: ScheduleQuery, session: ClientSession): Promise<ScheduleSnapshot> {
    fakeSessionOf(session, 'RecordingOutboxWriter: schedule read');
    return scheduleSnapshotOf(this.events, query, this.clock.now());
  }

  async cancel(eventId: string, session: ClientSession): Promise<CancelScheduledResult> {
    const fake = fakeSessionOf(session, 'RecordingOutboxWriter: cancel');
    return cancelInMemory(this.events, eventId, this.clock.now(), fake);
  }

  async ensureIndexes(): Promise<void> {}

  clear(): void {
    this.events.length = 0;
    this.transactions = 0;
    this.clock.reset();
  }
}

/** What the emit asked for, shown on the recorded event next to the resolved `availableAt`. */
function requested(schedule: ScheduleRequest | undefined): Partial<EmittedEvent> {
  if (!schedule) return {};
  return {
    ...(schedule.delayMs !== undefined ? { delayMs: schedule.delayMs } : {}),
    ...(schedule.wait ? {} : { waitForScheduled: false }),
  };
}
