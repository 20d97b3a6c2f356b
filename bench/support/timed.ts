/* A timed window of the bench's own process: its rate, and the CPU time it took per event. */

/** Events per second over the window, and CPU time (user + system) of this process per event, µs. */
export interface Timed {
  rate: number;
  cpuUs: number;
}

/**
 * Runs `work` (which handles `events` events) and times it: wall clock and `process.cpuUsage()`
 * of this process (every thread: kafkajs, the relay, GC; not the broker). The CPU per event
 * is the cost of the code measured, which the machine's load changes far less than its rate.
 */
export async function timed(events: number, work: () => Promise<void>): Promise<Timed> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { rate: events / seconds, cpuUs: (used.user + used.system) / events };
}

/** `r1 / r2 / ... msg/s, CPU c1 / c2 / ... µs/event` of several runs. */
export function formatTimed(runs: readonly Timed[]): string {
  const rates = runs.map((run) => run.rate.toFixed(0)).join(' / ');
  const cpu = runs.map((run) => run.cpuUs.toFixed(1)).join(' / ');
  return `${rates} msg/s, CPU ${cpu} µs/event`;
}
