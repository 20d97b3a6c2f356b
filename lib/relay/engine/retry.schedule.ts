/**
 * Due times of keys (aggregates waiting for a retry), earliest first: a binary heap with lazy
 * removal, so scheduling n keys costs O(n log n) (start-up with 100 000 retrying aggregates
 * must not block the event loop).
 */
export class RetrySchedule<K> {
  private heap: Array<{ at: number; key: K }> = [];
  private readonly due = new Map<K, number>();

  get size(): number {
    return this.due.size;
  }

  /** Sets (or moves) the due time of `key`. */
  set(key: K, at: number): void {
    this.due.set(key, at);
    this.push({ at, key });
  }

  delete(key: K): void {
    this.due.delete(key);
  }

  /** The earliest due time, or undefined. */
  next(): number | undefined {
    this.dropStale();
    return this.heap[0]?.at;
  }

  /** Removes and returns the keys due at or before `now`, earliest first. */
  takeDue(now: number): K[] {
    const out: K[] = [];
    for (;;) {
      this.dropStale();
      const head = this.heap[0];
      if (!head || head.at > now) break;
      this.pop();
      this.due.delete(head.key);
      out.push(head.key);
    }
    return out;
  }

  clear(): void {
    this.heap = [];
    this.due.clear();
  }

  private dropStale(): void {
    while (this.heap.length > 0) {
      const head = this.heap[0];
      if (this.due.get(head.key) === head.at) return;
      this.pop();
    }
  }

  private push(entry: { at: number; key: K }): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].at <= entry.at) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right].at < heap[left].at ? right : left;
      if (heap[child].at >= last.at) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = last;
  }
}
