/**
 * What every CLI command shares: its usage error, and the checks of one flag value (a time, a
 * positive integer, a non-empty single or repeated value). Each command's parser names its own
 * flags; these only read them.
 */

/** A command line that cannot be run; the message says what to fix. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

/** The string flags of a command as `parseArgs` returns them with `multiple: true`. */
export type FlagValues<Name extends string = string> = Partial<Record<Name, string[]>>;

/** The flags every command that reads MongoDB takes, as `parseArgs` options. */
export const COMMON_STRING_FLAGS = ['uri', 'limit', 'outbox-collection'] as const;

export function time(name: string, value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new CliUsageError(
      `--${name} "${value}" is not a time (use ISO 8601, e.g. 2026-12-01T10:00:00Z)`,
    );
  }
  return date;
}

export function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new CliUsageError(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

/**
 * The value of a single-valued option. An empty value is refused (an unset shell variable in
 * `--aggregate-id "$ID"` would otherwise widen the filter); so is a repeat with another value.
 */
export function single<Name extends string>(
  values: FlagValues<Name>,
  name: Name,
): string | undefined {
  const given = list(values, name);
  if (given === undefined) return undefined;
  if (new Set(given).size > 1) {
    throw new CliUsageError(
      `--${name} was given more than once with different values (${given.map((v) => `"${v}"`).join(', ')}): give it once`,
    );
  }
  return given[0];
}

/** Every value of an option (duplicates removed), each checked non-empty. */
export function list<Name extends string>(
  values: FlagValues<Name>,
  name: Name,
): string[] | undefined {
  const given = values[name];
  if (given === undefined) return undefined;
  if (given.some((value) => value.trim() === '')) {
    throw new CliUsageError(
      `--${name} was given an empty value: give a value, or leave the flag out ` +
        '(an unset shell variable expands to nothing)',
    );
  }
  return [...new Set(given)];
}

/** `--uri`, or `$MONGODB_URI`; refused when neither is given. */
export function mongoUri(
  values: FlagValues<'uri'>,
  env: Record<string, string | undefined>,
): string {
  const uri = single(values, 'uri') ?? env.MONGODB_URI;
  if (!uri) throw new CliUsageError('no MongoDB connection string: pass --uri or set MONGODB_URI');
  return uri;
}

/** Throws unless `positionals` are exactly `group action`, with `action` one of `actions`. */
export function checkAction<Action extends string>(
  positionals: readonly string[],
  group: string,
  actions: readonly Action[],
): Action {
  const [given, action, ...extra] = positionals;
  if (given !== group) {
    throw new CliUsageError(given ? `unknown command "${given}"` : 'no command given');
  }
  if (!actions.includes(action as Action)) {
    throw new CliUsageError(
      action ? `unknown action "${action}" (use ${actions.join(', ')})` : 'no action given',
    );
  }
  if (extra.length > 0) throw new CliUsageError(`unexpected argument "${extra[0]}"`);
  return action as Action;
}
