import type { SimTrace } from './sim.trace';

/** One scheduled callback. */
export interface SimTask {
  readonly at: number;
  readonly seq: number;
  /** Who it belongs to (`db`, `kafka`, `relay-1`...): traces and failure reports. */
  readonly tag: string;
  readonly label: string;
  cancelled: boolean;
  readonly run: () => void;
}

/** Why `run` returned. */
export type SimStop = 'done' | 'time-limit' | 'idle' | 'step-limit';

/**
 * The single source of time of a run: a priority queue of callbacks by (virtual time, sequence
 * number). `run` pops the earliest, moves time there, calls it, then lets every promise
 * continuation it caused run (one macrotask turn: nothing in a run may use real timers or I/O),
 * and repeats. Same tasks in, same order out: the run is a function of its schedule.
 */
export class SimScheduler {
  private readonly heap: SimTask[] = [];
  private nextSeq = 0;
  private time = 0;
  private stepCount = 0;

  constructor(
    private readonly trace: SimTrace,
    /** The real `setImmediate`, captured before anything can replace it. */
    private readonly yieldToMicrotasks: () => Promise<void> = defaultYield,
  ) {}

  get now(): number {
    return this.time;
  }

  get steps(): number {
    return this.stepCount;
  }

  get pending(): number {
    return this.heap.length;
  }

  /** Calls `run` at virtual time `at` (never before now). */
  at(at: number, tag: string, label: string, run: () => void): SimTask {
    const task: SimTask = {
      at: Math.max(this.time, Math.ceil(at)),
      seq: this.nextSeq++,
      tag,
      label,
      cancelled: false,
      run,
    };
    this.push(task);
    return task;
  }

  after(delay: number, tag: string, label: string, run: () => void): SimTask {
    return this.at(this.time + Math.max(0, delay), tag, label, run);
  }

  cancel(task: SimTask | undefined): void {
    if (task) task.cancelled = true;
  }

  /**
   * Runs tasks until `done()` holds (checked after every step), virtual time would pass
   * `until`, no task is left (time then moves to `until`), or `maxSteps` ran. `afterStep` runs after each step's
   * continuations (invariant monitors).
   */
  async run(options: {
    until: number;
    done?: () => boolean;
    afterStep?: () => void;
    maxSteps?: number;
  }): Promise<SimStop> {
    const maxSteps = options.maxSteps ?? Number.POSITIVE_INFINITY;
    await this.yieldToMicrotasks();
    for (;;) {
      if (options.done?.()) return 'done';
      const task = this.pop();
      if (!task) {
        if (Number.isFinite(options.until)) this.time = Math.max(this.time, options.until);
        return 'idle';
      }
      if (task.at > options.until) {
        this.push(task);
        this.time = Math.max(this.time, options.until);
        return 'time-limit';
      }
      if (this.stepCount >= maxSteps) {
        this.push(task);
        return 'step-limit';
      }
      this.time = task.at;
      this.stepCount++;
      this.trace.record(this.time, `${task.tag} ${task.label}`);
      task.run();
      await this.yieldToMicrotasks();
      options.afterStep?.();
    }
  }

  private pop(): SimTask | undefined {
    for (;;) {
      const top = this.heap[0];
      if (!top) return undefined;
      const last = this.heap.pop() as SimTask;
      if (this.heap.length > 0) {
        this.heap[0] = last;
        this.siftDown(0);
      }
      if (!top.cancelled) return top;
    }
  }

  private push(task: SimTask): void {
    this.heap.push(task);
    let index = this.heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(this.heap[index], this.heap[parent])) break;
      [this.heap[index], this.heap[parent]] = [this.heap[parent], this.heap[index]];
      index = parent;
    }
  }

  private siftDown(start: number): void {
    let index = start;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < this.heap.length && before(this.heap[left], this.heap[smallest])) smallest = left;
      if (right < this.heap.length && before(this.heap[right], this.heap[smallest]))
        smallest = right;
      if (smallest === index) return;
      [this.heap[index], this.heap[smallest]] = [this.heap[smallest], this.heap[index]];
      index = smallest;
    }
  }
}

function before(a: SimTask, b: SimTask): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

const realSetImmediate = setImmediate;

/** One macrotask turn: every promise continuation queued so far (and those they queue) runs first. */
function defaultYield(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}
