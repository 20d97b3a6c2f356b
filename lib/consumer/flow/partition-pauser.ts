/** The part of a kafkajs `Consumer` used to pause one partition (`KafkaContext.getConsumer()`). */
export interface PausableConsumer {
  pause(topics: Array<{ topic: string; partitions?: number[] }>): void;
  resume(topics: Array<{ topic: string; partitions?: number[] }>): void;
}

function isPausable(value: unknown): value is PausableConsumer {
  const candidate = value as Partial<PausableConsumer> | null;
  return typeof candidate?.pause === 'function' && typeof candidate?.resume === 'function';
}

/** The resume timer of each paused partition, per consumer. */
const resumeTimers = new WeakMap<object, Map<string, NodeJS.Timeout>>();

/**
 * Pauses one partition of `consumer` for `ms` (kafkajs then fetches nothing from it; the other
 * partitions keep flowing), replacing an earlier pause of the same partition. Meant to be called
 * from inside `eachMessage` right before it rejects, so that the message is not committed and is
 * fetched again once the partition resumes. Returns false when `consumer` cannot pause.
 */
export function pausePartition(
  consumer: unknown,
  topic: string,
  partition: number,
  ms: number,
): boolean {
  if (!isPausable(consumer)) return false;
  const target = [{ topic, partitions: [partition] }];
  try {
    consumer.pause(target);
  } catch {
    return false; // not running (stopping, or restarting after a crash): nothing to pause
  }
  let timers = resumeTimers.get(consumer);
  if (!timers) resumeTimers.set(consumer, (timers = new Map()));
  const key = `${topic}\u0000${partition}`;
  clearTimeout(timers.get(key));
  const timer = setTimeout(() => {
    timers.delete(key);
    try {
      consumer.resume(target);
    } catch {
      // The consumer stopped meanwhile; a restarted one starts unpaused.
    }
  }, ms);
  timer.unref();
  timers.set(key, timer);
  return true;
}
