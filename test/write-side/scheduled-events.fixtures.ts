import type { EmitSchedule, OutboxEventInput } from '../../lib';
import { OutboxEmitter, TransactionRunner } from '../../lib';
import type { WriteSideApp } from './write-side.fixtures';

export const reminder = (aggregateId: string, eventType = 'ReminderDue'): OutboxEventInput => ({
  eventType,
  aggregateType: 'Order',
  aggregateId,
  payload: {},
});

/** Emit and cancel through the app's public services, each call its own transaction. */
export function scheduling(ctx: WriteSideApp) {
  const runner = ctx.app.get(TransactionRunner);
  const emitter = ctx.app.get(OutboxEmitter);
  return {
    emit: (event: OutboxEventInput, schedule?: EmitSchedule) =>
      runner.run(async () => emitter.emit(event, schedule)),
    emitMany: (events: OutboxEventInput[], schedule?: EmitSchedule) =>
      runner.run(async () => emitter.emit(events, schedule)),
    cancel: (eventId: string) => runner.run(() => emitter.cancel(eventId)),
    runner,
    emitter,
  };
}

/** The MongoDB server's clock (`hello.localTime`), to bound server-time stamps from outside. */
export async function serverTime(ctx: WriteSideApp): Promise<Date> {
  const hello = (await ctx.connection.db!.command({ hello: 1 })) as { localTime: Date };
  return hello.localTime;
}
