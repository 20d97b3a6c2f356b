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
  private committed = new WeakMap<object, number>();

  async insert(
    events: NewOutboxEvent[],
    session: ClientSession,
    schedules: readonly ScheduleRequest[] = [],
    database?: string,
  ): Promise<void> {
    const fake = fakeSessionOf(session, 'RecordingOutboxWriter: insert');
    const rows = events.map((event, i) => ({
      ...event,
      ...requested(schedules[i]),
      ...(database !== undefined ? { database } : {}),
    }));
    fake.onCommit(() => {
      // Inserts into several (tenant) databases in one transaction share its number.
      let transaction = this.committed.get(fake);
      if (transaction === undefined) {
        transaction = ++this.transactions;
        this.committed.set(fake, transaction);
      }
      this.events.push(...rows.map((row) => ({ ...row, transaction, delivered: false })));
    });
  }

  async readSchedule(
    query: ScheduleQuery,
    session: ClientSession,
    database?: string,
  ): Promise<ScheduleSnapshot> {
    fakeSessionOf(session, 'RecordingOutboxWriter: schedule read');
    return scheduleSnapshotOf(this.in(database), query, this.clock.now());
  }

  async cancel(
    eventId: string,
    session: ClientSession,
    database?: string,
  ): Promise<CancelScheduledResult> {
    const fake = fakeSessionOf(session, 'RecordingOutboxWriter: cancel');
    return cancelInMemory(this.in(database), eventId, this.clock.now(), fake);
  }

  /** The events of one database (the tenant's, or the app's), as a database holds them. */
  private in(database: string | undefined): EmittedEvent[] {
    return this.events.filter((event) => event.database === database);
  }

  async ensureIndexes(): Promise<void> {}

  clear(): void {
    this.events.length = 0;
    this.transactions = 0;
    this.committed = new WeakMap();
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
