import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

/**
 * What happened in a run, line by line: hashed as it goes (the determinism check compares two
 * runs' hashes), and kept in memory only when asked (`--verbose`, failure reports).
 */
export class SimTrace {
  private readonly hash: Hash = createHash('sha256');
  private readonly kept: string[] | undefined;
  private readonly limit: number;
  private count = 0;

  constructor(options: { keep?: boolean; limit?: number } = {}) {
    this.kept = options.keep ? [] : undefined;
    this.limit = options.limit ?? 200_000;
  }

  record(time: number, line: string): void {
    const text = `${time} ${line}`;
    this.hash.update(text);
    this.hash.update('\n');
    this.count++;
    if (this.kept && this.kept.length < this.limit) this.kept.push(text);
  }

  get lines(): readonly string[] {
    return this.kept ?? [];
  }

  get length(): number {
    return this.count;
  }

  /** The hash of every line so far (call once, at the end). */
  digest(): string {
    return this.hash.digest('hex');
  }
}
