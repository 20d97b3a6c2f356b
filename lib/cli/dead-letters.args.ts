import { consumerDeadLetterQuery, deadLetterQuery } from '../operations/dead-letter.filter';
import type { DeadLetterFilter } from '../operations/dead-letter.filter';
import { CliUsageError, defined, time } from './cli-flags';
import type { CliTenant, CommandFlags, CommandLine, StringFlagOf } from './cli-flags';

export type DeadLetterAction = CommandLine<'dead-letters'>['action'];

export interface DeadLettersCommand {
  action: DeadLetterAction;
  /** The relay's dead letters, or the `@IdempotentHandler` consumers'. */
  kind: 'relay' | 'consumer';
  uri: string;
  filter: DeadLetterFilter;
  limit: number;
  batchSize: number;
  dryRun: boolean;
  yes: boolean;
  json: boolean;
  collections: { outbox?: string; deadLetters?: string; consumerDeadLetters?: string };
  /** `--tenant`: the tenant's database, its dead letters only. */
  tenant?: CliTenant;
}

export const DEAD_LETTERS_USAGE = `Usage: nestjs-outbox dead-letters <list|count|requeue|purge> [options]

  --uri <uri>                 MongoDB connection string (default: $MONGODB_URI); never printed
  --kind relay|consumer       the relay's dead letters (default) or the consumers'
  --filter <json>             a filter as JSON: {"eventType","aggregateType","aggregateId",
                              "error","since","until","eventIds"} (consumers: "consumer","topic")
  --event-type <type>         (repeatable: any of them) --aggregate-type <type>  --aggregate-id <id>
  --error <text>              the last error contains this text (case-insensitive)
  --since <time> --until <time>  dead-lettered in this range (ISO 8601)
  --event-id <id>             (repeatable: any of them)
  --consumer <name>  --topic <topic>   consumer dead letters: of this consumer, from this topic
  --all                       requeue, purge: every dead letter (required when there is no filter)
  --limit <n>                 list: at most n dead letters (default 100)
  --batch-size <n>            requeue: events per transaction (default 100)
  --dry-run                   requeue, purge: print the filter and what would happen, change nothing
  --yes                       purge: do not ask for confirmation
  --json                      print JSON
  --outbox-collection <name>  --dead-letters-collection <name>
  --consumer-dead-letters-collection <name>   non-default collection names
  --tenant <id>               with tenants: work in this tenant's database, on its events only
  --tenant-database <name>    the tenant's database, when it is not named like the tenant

The filter flags add their field to --filter (AND). Refused, with exit code 2: an empty value
(--aggregate-id "" from an unset variable), a flag that disagrees with the same field of
--filter, a single-valued flag repeated with another value, requeue or purge with no filter
and no --all, and --all with a filter.
`;

function parseFilter(json: string | undefined): DeadLetterFilter {
  if (json === undefined) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new CliUsageError(`--filter is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CliUsageError('--filter must be a JSON object');
  }
  const filter = { ...(raw as Record<string, unknown>) };
  for (const name of ['since', 'until'] as const) {
    if (typeof filter[name] === 'string') filter[name] = time(name, filter[name] as string);
  }
  return filter as DeadLetterFilter;
}

type Flags = CommandFlags<'dead-letters'>;

const FILTER_FLAGS: ReadonlyArray<[StringFlagOf<'dead-letters'>, keyof DeadLetterFilter]> = [
  ['event-type', 'eventType'],
  ['aggregate-type', 'aggregateType'],
  ['aggregate-id', 'aggregateId'],
  ['error', 'error'],
  ['since', 'since'],
  ['until', 'until'],
  ['event-id', 'eventIds'],
  ['consumer', 'consumer'],
  ['topic', 'topic'],
];

/** The value the flag `name` gives its filter field, or undefined when it is not given. */
function flagValue(
  flags: Flags,
  name: StringFlagOf<'dead-letters'>,
): DeadLetterFilter[keyof DeadLetterFilter] {
  switch (name) {
    case 'event-type': {
      const types = flags.list(name);
      return types && types.length === 1 ? types[0] : types;
    }
    case 'event-id':
      return flags.list(name);
    case 'since':
    case 'until':
      return flags.time(name);
    default:
      return flags.single(name);
  }
}

/** A field's value as a comparable text: one value or a list as a sorted set, a time by its instant. */
function canonical(value: unknown): string {
  if (Array.isArray(value) || typeof value === 'string') {
    const items = (Array.isArray(value) ? value : [value]) as unknown[];
    return JSON.stringify([...new Set(items.map((item) => JSON.stringify(item)))].sort());
  }
  return value instanceof Date ? `date:${value.getTime()}` : JSON.stringify(value);
}

/**
 * `--filter` and the filter flags as one filter. A flag adds its field; a flag and the same
 * field of `--filter` must agree (same value, or the same set of values).
 */
function buildFilter(flags: Flags): DeadLetterFilter {
  const filter: Record<string, unknown> = { ...parseFilter(flags.single('filter')) };
  for (const [flag, field] of FILTER_FLAGS) {
    const value = flagValue(flags, flag);
    if (value === undefined) continue;
    if (filter[field] !== undefined && canonical(filter[field]) !== canonical(value)) {
      throw new CliUsageError(
        `--${flag} ${JSON.stringify(value)} disagrees with "${field}" in --filter ` +
          `(${JSON.stringify(filter[field])}): give the field once, or the same value in both`,
      );
    }
    filter[field] ??= value;
  }
  return filter as DeadLetterFilter;
}

/**
 * `dead-letters <action> [options]`, checked; throws `CliUsageError` (or
 * `DeadLetterFilterError` for a filter the kind of dead letter cannot use). The filter it
 * returns is the one every action uses and `--dry-run` prints.
 */
export function deadLettersCommand(
  { action, flags }: CommandLine<'dead-letters'>,
  env: Record<string, string | undefined>,
): DeadLettersCommand {
  const uri = flags.mongoUri(env);
  const kind = flags.single('kind') ?? 'relay';
  if (kind !== 'relay' && kind !== 'consumer') {
    throw new CliUsageError(`--kind must be relay or consumer, got "${kind}"`);
  }
  if (kind === 'consumer' && action === 'requeue') {
    throw new CliUsageError(
      'consumer dead letters are requeued by the app that runs their @IdempotentHandler ' +
        '(it applies each one again): call OutboxConsumerDeadLetters.requeueMany() there',
    );
  }
  const filter = buildFilter(flags);
  const tenant = flags.tenant();
  // Checked now, against the fields of this kind of dead letter: what runs is what was parsed.
  if (kind === 'consumer') consumerDeadLetterQuery(filter);
  else deadLetterQuery(filter);
  checkScope(action, filter, flags.on('all'));

  return {
    action,
    kind,
    uri,
    filter,
    collections: defined({
      outbox: flags.single('outbox-collection'),
      deadLetters: flags.single('dead-letters-collection'),
      consumerDeadLetters: flags.single('consumer-dead-letters-collection'),
    }),
    limit: flags.positive('limit', 100),
    batchSize: flags.positive('batch-size', 100),
    dryRun: flags.on('dry-run'),
    yes: flags.on('yes'),
    json: flags.on('json'),
    ...(tenant ? { tenant } : {}),
  };
}

/** `--all` is how `purge` and `requeue` are told to act on every dead letter, and only that. */
function checkScope(action: DeadLetterAction, filter: DeadLetterFilter, all: boolean): void {
  const empty = Object.keys(filter).length === 0;
  if (all && !empty) {
    throw new CliUsageError(
      `--all cannot be combined with a filter (${JSON.stringify(filter)}): drop --all to act on ` +
        'the filter, or drop the filter to act on every dead letter',
    );
  }
  if (empty && !all && (action === 'purge' || action === 'requeue')) {
    throw new CliUsageError(
      `${action} without a filter would act on every dead letter: pass --all to mean that, ` +
        'or narrow it with --filter or the filter flags',
    );
  }
}
