import { Controller, Injectable } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import {
  EmitsEvent,
  IdempotentHandler,
  OutboxEmitter,
  Transactional,
  TransactionRunner,
} from '../index';
import { OutboxTesting, OutboxTestingModule } from './index';

const DAY = 24 * 60 * 60 * 1000;

/** A user's service: a reminder a day after the order, unless cancelled when it is paid. */
@Injectable()
class Reminders {
  constructor(private readonly outbox: OutboxEmitter) {}

  @Transactional()
  async place(id: string): Promise<{ id: string; reminderId: string }> {
    this.outbox.emit({
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: id,
      payload: {},
    });
    const reminderId = this.outbox.emit(
      { eventType: 'PaymentReminderDue', aggregateType: 'Order', aggregateId: id, payload: {} },
      { delayMs: DAY },
    );
    return { id, reminderId };
  }

  @EmitsEvent<{ id: string; days: number }>('HoldExpired', {
    aggregateType: 'Hold',
    aggregateId: (hold) => hold.id,
    payload: () => ({}),
    delayMs: (hold) => hold.days * DAY,
  })
  async hold(id: string, days: number): Promise<{ id: string; days: number }> {
    return { id, days };
  }

  @Transactional()
  async pay(id: string, reminderId: string) {
    const cancelled = await this.outbox.cancel(reminderId);
    this.outbox.emit({
      eventType: 'OrderPaid',
      aggregateType: 'Order',
      aggregateId: id,
      payload: {},
    });
    return cancelled;
  }
}

@Controller()
class Notifications {
  readonly seen: string[] = [];

  @EventPattern('PaymentReminderDue')
  @IdempotentHandler({ consumer: 'reminder-mails' })
  async onReminder(@Payload() _event: unknown, @Ctx() context: KafkaContext) {
    this.seen.push(`reminder:${String(context.getMessage().key)}`);
  }

  @EventPattern('OrderPaid')
  @IdempotentHandler({ consumer: 'receipts' })
  async onPaid(@Payload() _event: unknown, @Ctx() context: KafkaContext) {
    this.seen.push(`paid:${String(context.getMessage().key)}`);
  }
}

describe('OutboxTestingModule with scheduled events: no real waiting', () => {
  let moduleRef: TestingModule;
  let outbox: OutboxTesting;
  let reminders: Reminders;
  let notifications: Notifications;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot({ scheduledEvents: true })],
      controllers: [Notifications],
      providers: [Reminders],
    }).compile();
    await moduleRef.init();
    outbox = moduleRef.get(OutboxTesting);
    reminders = moduleRef.get(Reminders);
    notifications = moduleRef.get(Notifications);
  });
  afterAll(() => moduleRef.close());
  beforeEach(() => {
    outbox.clear();
    notifications.seen.length = 0;
  });

  it('shows the due time of an emitted event (testing clock + delayMs)', async () => {
    const before = outbox.now().getTime();
    await reminders.place('o-1');
    const reminder = outbox.expectEmitted('PaymentReminderDue');
    expect(reminder.delayMs).toBe(DAY);
    expect(reminder.availableAt!.getTime()).toBeGreaterThanOrEqual(before + DAY);
    expect(reminder.availableAt!.getTime()).toBeLessThanOrEqual(outbox.now().getTime() + DAY);
  });

  it('@EmitsEvent: delayMs as a function of the result', async () => {
    await reminders.hold('h-1', 2);
    expect(outbox.expectEmitted('HoldExpired').delayMs).toBe(2 * DAY);
  });

  it('drain() leaves a scheduled event pending until drain({ until }) reaches its due time', async () => {
    await reminders.place('o-1');
    const first = await outbox.drain();
    expect(first.delivered.map((e) => e.eventType)).toEqual(['OrderPlaced']);
    expect(first.notDue.map((e) => e.eventType)).toEqual(['PaymentReminderDue']);
    const second = await outbox.drain({ until: new Date(Date.now() + DAY + 1000) });
    expect(second.delivered.map((e) => e.eventType)).toEqual(['PaymentReminderDue']);
    expect(notifications.seen).toEqual(['reminder:o-1']);
  });

  it('a cancelled event is visible as cancelled and never delivered', async () => {
    const { reminderId } = await reminders.place('o-2');
    const result = await reminders.pay('o-2', reminderId);
    expect(result).toMatchObject({ outcome: 'cancelled', eventId: reminderId });
    expect(outbox.cancelled().map((e) => e.eventId)).toEqual([reminderId]);
    expect(outbox.emitted({ status: 'cancelled' })[0]).toMatchObject({
      eventType: 'PaymentReminderDue',
      cancelledAt: expect.any(Date),
    });
    await outbox.drain({ until: new Date(Date.now() + 2 * DAY) });
    expect(notifications.seen).toEqual(['paid:o-2']);
  });

  it('a later event of the aggregate waits for the scheduled one (order across delays)', async () => {
    await reminders.place('o-3');
    await outbox.drain();
    // Paid without cancelling: OrderPaid inherits the reminder's due time.
    await moduleRef.get(TransactionRunner).run(async () =>
      moduleRef.get(OutboxEmitter).emit({
        eventType: 'OrderPaid',
        aggregateType: 'Order',
        aggregateId: 'o-3',
        payload: {},
      }),
    );
    const paid = outbox.expectEmitted('OrderPaid');
    expect(paid.availableAt).toEqual(outbox.expectEmitted('PaymentReminderDue').availableAt);
    expect((await outbox.drain()).delivered).toEqual([]);
    await outbox.drain({ until: new Date(Date.now() + DAY + 1000) });
    expect(notifications.seen).toEqual(['reminder:o-3', 'paid:o-3']);
  });

  it('cancel after drain() delivered the event says published, as after the relay published it', async () => {
    const { reminderId } = await reminders.place('o-4');
    await outbox.drain({ until: new Date(Date.now() + DAY + 1000) });
    expect(outbox.expectEmitted('PaymentReminderDue')).toMatchObject({ status: 'published' });
    expect(await reminders.pay('o-4', reminderId)).toMatchObject({ outcome: 'published' });
  });
});
