/** Throws the caller's typed error for `option` (its full path), saying the problem and the fix. */
export type OptionFail = (option: string, problem: string, fix: string) => never;

/**
 * The option keys of `T`, each listed once: declare a key list `satisfies OptionKeys<T>`, and an
 * option added to `T` without being listed fails the typecheck.
 */
export type OptionKeys<T> = Record<keyof T, true>;

/** Bounds of an integer option, both included; `unit` is shown in messages (e.g. 'ms'). */
export interface IntegerRange {
  min: number;
  /** Default: none (up to `Number.MAX_SAFE_INTEGER`). */
  max?: number;
  unit?: string;
}

/** Any non-array object (config classes included). */
export function isOptionObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A value as messages show it: strings quoted, objects as JSON, functions as 'a function'. */
export function showOption(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return typeof value;
  }
}

/**
 * The checks every options section uses, bound to the section's path (`relay.`, `consumer.`,
 * ...) and to its error. Each check returns the value (or `fallback` when it is undefined), or
 * throws naming `<prefix><key>`, the problem and the fix.
 */
export class OptionChecker {
  constructor(
    private readonly prefix: string,
    private readonly raise: OptionFail,
  ) {}

  /** The checker of a nested section, e.g. `relay.` -> `relay.backoff.`. */
  at(section: string): OptionChecker {
    return new OptionChecker(`${this.prefix}${section}.`, this.raise);
  }

  fail(key: string, problem: string, fix: string): never {
    return this.raise(this.path(key), problem, fix);
  }

  /**
   * An options object (`{}` when undefined) whose keys are all in `keys`; an unknown key fails,
   * suggesting the closest known one. `key` '' checks the section itself.
   */
  object<T>(key: string, value: unknown, keys: Record<keyof T, unknown>, fix?: string): Partial<T> {
    if (value === undefined) return {};
    if (!isOptionObject(value)) {
      this.fail(
        key,
        `expected an object, got ${showOption(value)}`,
        fix ?? 'Pass an object, or leave it out.',
      );
    }
    const known = Object.keys(keys);
    const inner = key === '' ? this : this.at(key);
    for (const name of Object.keys(value)) {
      if (known.includes(name)) continue;
      const close = closest(name, known);
      const section = inner.prefix.slice(0, -1);
      inner.fail(
        name,
        'is not a known option',
        (close ? `Did you mean "${inner.path(close)}"? ` : '') +
          `Known options${section ? ` of ${section}` : ''}: ${known.join(', ')}.`,
      );
    }
    return value as Partial<T>;
  }

  int(key: string, value: unknown, fallback: number, range: IntegerRange, fix?: string): number {
    if (value === undefined) return fallback;
    if (
      typeof value !== 'number' ||
      !Number.isSafeInteger(value) ||
      value < range.min ||
      value > (range.max ?? Infinity)
    ) {
      const bounds =
        range.max === undefined ? `>= ${range.min}` : `from ${range.min} to ${range.max}`;
      const unit = range.unit ? ` (${range.unit})` : '';
      this.fail(
        key,
        `expected an integer ${bounds}${unit}, got ${showOption(value)}`,
        fix ?? `Omit it for the default (${fallback}).`,
      );
    }
    return value;
  }

  durationMs(key: string, value: unknown, fallback: number, range: IntegerRange, fix?: string) {
    return this.int(key, value, fallback, { ...range, unit: 'ms' }, fix);
  }

  number(key: string, value: unknown, fallback: number, min: number, max: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !(value >= min && value <= max)) {
      this.fail(
        key,
        `expected a number from ${min} to ${max}, got ${showOption(value)}`,
        `Omit it for the default (${fallback}).`,
      );
    }
    return value;
  }

  bool(key: string, value: unknown, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.fail(
        key,
        `expected true or false, got ${showOption(value)}`,
        `Omit it for the default (${fallback}).`,
      );
    }
    return value;
  }

  oneOf<V extends string>(key: string, value: unknown, allowed: readonly V[], fix: string): V {
    if (!allowed.includes(value as V)) {
      this.fail(
        key,
        `expected ${allowed.map((v) => JSON.stringify(v)).join(' or ')}, got ${showOption(value)}`,
        fix,
      );
    }
    return value as V;
  }

  /** A non-empty string (with `nonBlank`, not only spaces either); `undefined` gives `fallback`. */
  text<F extends string | undefined>(
    key: string,
    value: unknown,
    fallback: F,
    fix: string,
    nonBlank = false,
  ): string | F {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || (nonBlank ? value.trim() : value) === '') {
      this.fail(key, `expected a non-empty string, got ${showOption(value)}`, fix);
    }
    return value;
  }

  fn<F>(key: string, value: unknown, fix: string): F | undefined {
    if (value !== undefined && typeof value !== 'function') {
      this.fail(key, `expected a function, got ${showOption(value)}`, fix);
    }
    return value as F | undefined;
  }

  /** Fails unless `problem` is undefined (for checks with their own wording). */
  check(key: string, problem: string | undefined, fix: string): void {
    if (problem !== undefined) this.fail(key, problem, fix);
  }

  /** `<prefix><key>`; the section itself (`relay`) for key ''. */
  private path(key: string): string {
    return key === '' ? this.prefix.slice(0, -1) : `${this.prefix}${key}`;
  }
}

function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
