/* A timed window of the bench's own process: its rate, and the CPU time it took per event. */
import { readFileSync } from 'node:fs';

/** Events per second over the window, and CPU time (user + system) of this process per event, µs. */
export interface Timed {
  rate: number;
  cpuUs: number;
  /**
   * Of `cpuUs`, the main thread's (the code measured: the relay, the client's encoding); the rest
   * is V8's helper threads (garbage collection, compilation) and libuv's. Where the system does
   * not tell (Linux `/proc/thread-self/schedstat`), undefined.
   */
  mainCpuUs?: number;
}

/** CPU time of the calling thread, ns, or undefined where the system does not tell. */
function threadCpuNs(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` (which handles `events` events) and times it: wall clock and `process.cpuUsage()`
 * of this process (every thread: kafkajs, the relay, GC; not the broker). The CPU per event
 * is the cost of the code measured, which the machine's load changes far less than its rate.
 */
export async function timed(events: number, work: () => Promise<void>): Promise<Timed> {
  const cpu = process.cpuUsage();
  const mainAtStart = threadCpuNs();
  const started = process.hrtime.bigint();
  await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  const mainAtEnd = threadCpuNs();
  return {
    rate: events / seconds,
    cpuUs: (used.user + used.system) / events,
    mainCpuUs:
      mainAtStart === undefined || mainAtEnd === undefined
        ? undefined
        : (mainAtEnd - mainAtStart) / 1000 / events,
  };
}

/** `r1 / r2 / ... msg/s, CPU c1 / c2 / ... µs/event (main thread m1 / m2 / ...)` of several runs. */
export function formatTimed(runs: readonly Timed[]): string {
  const rates = runs.map((run) => run.rate.toFixed(0)).join(' / ');
  const cpu = runs.map((run) => run.cpuUs.toFixed(1)).join(' / ');
  const main = runs.every((run) => run.mainCpuUs !== undefined)
    ? ` (main thread ${runs.map((run) => (run.mainCpuUs as number).toFixed(1)).join(' / ')})`
    : '';
  return `${rates} msg/s, CPU ${cpu} µs/event${main}`;
}
