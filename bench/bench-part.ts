/* What every benchmark shares: the run's context, the parts a bench is made of, and the check
 * that fails a run when a bench finds a wrong result (bench/index.ts runs the parts). */

export interface BenchContext {
  mongoUri?: string;
  mongoKind: 'mongodb' | 'poppydb' | 'none';
  kafkaBrokers: string[];
  /** `--smoke`: every part at a small size (seconds, not minutes), through the same code. */
  smoke: boolean;
}

/** A server a part cannot run without; without it the part is listed as skipped. */
export type BenchNeed = 'kafka' | 'mongodb';

export interface BenchPart {
  /** `<bench>/<part>`, e.g. `relay/drain`; `npm run bench -- relay` runs every `relay/...` part. */
  name: string;
  needs: readonly BenchNeed[];
  run(ctx: BenchContext): Promise<void>;
}

/** A bench found a wrong result (events lost, duplicated or left pending): the run fails. */
export class BenchCheckError extends Error {
  override readonly name = 'BenchCheckError';
}

export function check(condition: boolean, wrong: string): asserts condition {
  if (!condition) throw new BenchCheckError(wrong);
}

/** One figure of a bench's report: its label, then its value, in columns. */
export function line(label: string, value: string): void {
  process.stdout.write(`  ${label.padEnd(58)} ${value}\n`);
}

/** A size: the variable `envName` when set, else `full`, or `smoke` under `--smoke`. */
export function sized(ctx: BenchContext, envName: string, full: number, smoke: number): number {
  const set = process.env[envName];
  if (set) return Number(set);
  return ctx.smoke ? smoke : full;
}
