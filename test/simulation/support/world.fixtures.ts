import { Types } from 'mongoose';
import { SimScheduler } from '../core/sim.scheduler';
import { SimTrace } from '../core/sim.trace';
import { SimDatabase } from '../mongo/sim-database';
import type { SimOutboxDoc } from '../mongo/sim-database';
import { SIM_EPOCH_MS } from '../process/sim-process';
import { SimHistory } from '../world/sim.history';

/** A database model on its own scheduler, with fixed majority lag and oplog window. */
export function databaseWorld(
  options: { lagMs?: number; windowMs?: number; sequence?: boolean } = {},
) {
  const scheduler = new SimScheduler(new SimTrace());
  const history = new SimHistory();
  let windowMs = options.windowMs ?? 60_000;
  const db = new SimDatabase(scheduler, history, {
    aggregateSequence: options.sequence ?? true,
    oplogWindowMs: () => windowMs,
    majorityLagMs: () => options.lagMs ?? 10,
    topicOf: (type) => `sim.${type}`,
    sizeOf: () => 100,
    isOversize: () => false,
    isPoison: () => false,
  });
  return {
    scheduler,
    history,
    db,
    setWindow: (ms: number) => (windowMs = ms),
    /** Runs the scheduler up to `time`. */
    until: (time: number) => scheduler.run({ until: time }),
  };
}

let counter = 0;

/** An outbox document as a writer makes it. */
export function outboxDoc(aggregateId: string, type = 'Order'): SimOutboxDoc {
  counter++;
  return {
    _id: new Types.ObjectId(
      `${(0x70000000 + counter).toString(16)}0000000000${counter.toString(16).padStart(6, '0')}`,
    ),
    eventId: `e${counter}`,
    aggregateType: type,
    aggregateId,
    eventType: 'Created',
    payload: { n: counter },
    occurredAt: new Date(SIM_EPOCH_MS),
    status: 'pending',
    attempts: 0,
  };
}
