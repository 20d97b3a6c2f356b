import { parseArgs } from 'node:util';
import { databaseNameProblem } from '../tenants/tenant.resolution';

/**
 * The CLI's command line: commands, actions, every flag and where it may be given, and the checks
 * of one flag value. Each command's parser reads its flags through `CommandFlags`.
 */

/** A command line that cannot be run; the message says what to fix. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

const COMMANDS = {
  'dead-letters': ['list', 'count', 'requeue', 'purge'],
  scheduled: ['list', 'cancel'],
} as const;

export type CommandName = keyof typeof COMMANDS;
type ActionOf<C extends CommandName> = (typeof COMMANDS)[C][number];
/** Where a flag may be given: a whole command, or one action of it (`scheduled cancel`). */
type Scope = { [C in CommandName]: C | `${C} ${ActionOf<C>}` }[CommandName];

const string = <S extends Scope>(...of: S[]) => ({ type: 'string' as const, of });
const boolean = <S extends Scope>(...of: S[]) => ({ type: 'boolean' as const, of });

/**
 * Every flag of the CLI and where it may be given; one given elsewhere is refused, naming where
 * it belongs. A string flag keeps all its values, so that a repeat is seen, not overwritten.
 */
const FLAGS = {
  uri: string('dead-letters', 'scheduled'),
  json: boolean('dead-letters', 'scheduled'),
  'outbox-collection': string('dead-letters', 'scheduled'),
  tenant: string('dead-letters', 'scheduled'),
  'tenant-database': string('dead-letters', 'scheduled'),
  limit: string('dead-letters', 'scheduled list'),
  'event-type': string('dead-letters', 'scheduled list'),
  'aggregate-type': string('dead-letters', 'scheduled list'),
  'aggregate-id': string('dead-letters', 'scheduled list'),
  'due-before': string('scheduled list'),
  'event-id': string('dead-letters', 'scheduled cancel'),
  'dry-run': boolean('dead-letters', 'scheduled cancel'),
  kind: string('dead-letters'),
  filter: string('dead-letters'),
  error: string('dead-letters'),
  since: string('dead-letters'),
  until: string('dead-letters'),
  consumer: string('dead-letters'),
  topic: string('dead-letters'),
  all: boolean('dead-letters'),
  yes: boolean('dead-letters'),
  'batch-size': string('dead-letters'),
  'dead-letters-collection': string('dead-letters'),
  'consumer-dead-letters-collection': string('dead-letters'),
} as const;

type Flag = keyof typeof FLAGS;
type FlagIn<C extends CommandName, Type> = {
  [F in Flag]: (typeof FLAGS)[F]['type'] extends Type
    ? Extract<(typeof FLAGS)[F]['of'][number], C | `${C} ${string}`> extends never
      ? never
      : F
    : never;
}[Flag];
/** The string flags of command `C` (any of its actions). */
export type StringFlagOf<C extends CommandName> = FlagIn<C, 'string'>;
type SwitchOf<C extends CommandName> = FlagIn<C, 'boolean'>;

/** A command line, checked: a known command and action, and only flags it takes. */
export type CommandLine<C extends CommandName = CommandName> = {
  [K in C]: { command: K; action: ActionOf<K>; flags: CommandFlags<K> };
}[C];

/**
 * `<command> <action> [flags]` (flags anywhere), checked: the command and action exist and every
 * flag belongs to them. With `command`, only that command is accepted. Throws `CliUsageError`.
 */
export function parseCommandLine<C extends CommandName = CommandName>(
  argv: readonly string[],
  command?: C,
): CommandLine<C> {
  const { values, positionals } = parseFlags(argv);
  const [name, action, ...extra] = positionals;
  const commands: readonly string[] = command ? [command] : Object.keys(COMMANDS);
  if (!commands.includes(name)) {
    throw new CliUsageError(name ? `unknown command "${name}"` : 'no command given');
  }
  const actions: readonly string[] = COMMANDS[name as CommandName];
  if (!actions.includes(action)) {
    throw new CliUsageError(
      action ? `unknown action "${action}" (use ${actions.join(', ')})` : 'no action given',
    );
  }
  if (extra.length > 0) throw new CliUsageError(`unexpected argument "${extra[0]}"`);
  checkScopes(Object.keys(values) as Flag[], name as CommandName, action);
  return { command: name, action, flags: new CommandFlags(values) } as CommandLine<C>;
}

function parseFlags(argv: readonly string[]) {
  const options = Object.fromEntries(
    Object.entries(FLAGS).map(([name, { type }]) => [name, { type, multiple: type === 'string' }]),
  );
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options,
    });
    // Every string flag is `multiple`: its values are a list.
    return { values: values as Partial<Record<string, string[] | boolean>>, positionals };
  } catch (error) {
    // parseArgs' own words (an unknown flag, a flag without its value), as a usage error.
    const code = (error as { code?: string }).code;
    if (code?.startsWith('ERR_PARSE_ARGS')) throw new CliUsageError((error as Error).message);
    throw error;
  }
}

/**
 * Refuses a flag given where it does not belong, naming where it does: another action of the
 * same command first (with what this action takes instead), else the other commands.
 */
function checkScopes(given: readonly Flag[], command: CommandName, action: string): void {
  const scopesOf = (flag: Flag): readonly string[] => FLAGS[flag].of;
  const here = `${command} ${action}`;
  const misplaced = given.find((flag) => !scopesOf(flag).some((s) => s === command || s === here));
  if (misplaced === undefined) return;
  // A flag of another action of this command: say so, and what this action takes instead.
  const sameCommand = scopesOf(misplaced).filter((scope) => scope.startsWith(`${command} `));
  if (sameCommand.length > 0) {
    const instead = (Object.keys(FLAGS) as Flag[]).filter((flag) => scopesOf(flag).includes(here));
    throw new CliUsageError(
      `--${misplaced} is a flag of ${sameCommand.map((s) => `"${s}"`).join(' and ')}, not of ` +
        `"${here}" (whose own flags are ${instead.map((flag) => `--${flag}`).join(', ')})`,
    );
  }
  const elsewhere = scopesOf(misplaced).map((scope) => `"${scope}"`);
  throw new CliUsageError(
    `--${misplaced} is a flag of ${elsewhere.join(' and ')}, not of "${command}"`,
  );
}

/** The flags of one command line, read and checked by name. */
export class CommandFlags<C extends CommandName> {
  constructor(private readonly values: Partial<Record<string, string[] | boolean>>) {}

  on(name: SwitchOf<C>): boolean {
    return this.values[name] === true;
  }

  /** Every value of a repeatable flag (duplicates removed), each checked non-empty. */
  list(name: StringFlagOf<C>): string[] | undefined {
    const given = this.values[name] as string[] | undefined;
    if (given === undefined) return undefined;
    if (given.some((value) => value.trim() === '')) {
      throw new CliUsageError(
        `--${name} was given an empty value: give a value, or leave the flag out ` +
          '(an unset shell variable expands to nothing)',
      );
    }
    return [...new Set(given)];
  }

  /**
   * The value of a single-valued flag. An empty value is refused (an unset shell variable in
   * `--aggregate-id "$ID"` would otherwise widen the filter); so is a repeat with another value.
   */
  single(name: StringFlagOf<C>): string | undefined {
    const given = this.list(name);
    if (given !== undefined && given.length > 1) {
      throw new CliUsageError(
        `--${name} was given more than once with different values (${given.map((v) => `"${v}"`).join(', ')}): give it once`,
      );
    }
    return given?.[0];
  }

  time(name: StringFlagOf<C>): Date | undefined {
    const value = this.single(name);
    return value === undefined ? undefined : time(name, value);
  }

  /** A single-valued flag that is a positive integer, `fallback` when not given. */
  positive(name: StringFlagOf<C>, fallback: number): number {
    const value = this.single(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new CliUsageError(`--${name} must be a positive integer, got "${value}"`);
    return n;
  }

  /**
   * `--tenant <id>` and its database: `--tenant-database <name>`, or the tenant id (the default
   * `databaseOf`); `--tenant-database` alone is refused.
   */
  tenant(): CliTenant | undefined {
    const id = this.single('tenant' as StringFlagOf<C>);
    const database = this.single('tenant-database' as StringFlagOf<C>);
    if (id === undefined) {
      if (database !== undefined) {
        throw new CliUsageError(
          '--tenant-database needs --tenant <id> (the tenant whose data it holds)',
        );
      }
      return undefined;
    }
    const target = database ?? id;
    const problem = databaseNameProblem(target);
    if (problem) throw new CliUsageError(`the tenant's database name: ${problem}`);
    return { id, database: target };
  }

  /** `--uri`, or `$MONGODB_URI`; refused when neither is given. */
  mongoUri(env: Record<string, string | undefined>): string {
    const uri = this.single('uri' as StringFlagOf<C>) ?? env.MONGODB_URI;
    if (!uri)
      throw new CliUsageError('no MongoDB connection string: pass --uri or set MONGODB_URI');
    return uri;
  }
}

/** The tenant a command works on (`--tenant`, `--tenant-database`). */
export interface CliTenant {
  id: string;
  database: string;
}

/** `value` as a time, for flag (or `--filter` field) `name`. */
export function time(name: string, value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new CliUsageError(
      `--${name} "${value}" is not a time (use ISO 8601, e.g. 2026-12-01T10:00:00Z)`,
    );
  }
  return date;
}

/** `record` without its undefined fields. */
export function defined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
