import { parseArgs } from 'node:util';
import {
  checkAction,
  COMMON_STRING_FLAGS,
  CliUsageError,
  list,
  mongoUri,
  positive,
  single,
  time,
} from './cli-flags';
import type { FlagValues } from './cli-flags';

export const SCHEDULED_ACTIONS = ['list', 'cancel'] as const;
export type ScheduledAction = (typeof SCHEDULED_ACTIONS)[number];

/** Which pending scheduled events `scheduled list` shows (all fields must match). */
export interface ScheduledFilter {
  aggregateType?: string;
  aggregateId?: string;
  eventType?: string;
  /** Due (`availableAt`) strictly before this time. */
  dueBefore?: Date;
}

export interface ScheduledCommand {
  action: ScheduledAction;
  uri: string;
  filter: ScheduledFilter;
  /** `cancel`: the events to cancel, in the order given (duplicates removed). */
  eventIds: string[];
  limit: number;
  dryRun: boolean;
  json: boolean;
  collections: { outbox?: string };
}

export const SCHEDULED_USAGE = `Usage: nestjs-outbox scheduled <list|cancel> [options]

  list                        pending scheduled events by due time, with how long until due
                              (or how overdue) by the server's clock
    --aggregate-type <type>  --aggregate-id <id>  --event-type <type>
    --due-before <time>       due before this time (ISO 8601)
    --limit <n>               at most n events (default 100)
  cancel --event-id <id>      (repeatable) cancel these scheduled events, one by one; exit code 1
                              if any was not cancelled (already due, published, not found, not
                              scheduled)
    --dry-run                 say what each cancel would find, change nothing
  --uri <uri>                 MongoDB connection string (default: $MONGODB_URI); never printed
  --json                      print JSON
  --outbox-collection <name>  non-default outbox collection name
`;

const STRING_OPTIONS = [
  ...COMMON_STRING_FLAGS,
  'aggregate-type',
  'aggregate-id',
  'event-type',
  'due-before',
  'event-id',
] as const;
type StringOption = (typeof STRING_OPTIONS)[number];

const LIST_ONLY: readonly StringOption[] = [
  'aggregate-type',
  'aggregate-id',
  'event-type',
  'due-before',
  'limit',
];

/** `scheduled <list|cancel> [options]`, checked; throws `CliUsageError`. */
export function parseScheduledCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): ScheduledCommand {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      // Every string option keeps all its values, so that a repeat is seen, not overwritten.
      ...Object.fromEntries(
        STRING_OPTIONS.map((name) => [name, { type: 'string' as const, multiple: true }]),
      ),
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const strings = values as FlagValues<StringOption>;
  const action = checkAction(positionals, 'scheduled', SCHEDULED_ACTIONS);
  const uri = mongoUri(strings, env);
  const eventIds = list(strings, 'event-id') ?? [];
  if (action === 'cancel') {
    const listFlag = LIST_ONLY.find((name) => strings[name] !== undefined);
    if (listFlag) {
      throw new CliUsageError(
        `--${listFlag} is a flag of "scheduled list": cancel takes the events by --event-id`,
      );
    }
    if (eventIds.length === 0) {
      throw new CliUsageError('scheduled cancel needs --event-id <id> (repeat it for several)');
    }
  } else {
    if (eventIds.length > 0 || values['dry-run']) {
      throw new CliUsageError(
        `--${eventIds.length > 0 ? 'event-id' : 'dry-run'} is a flag of "scheduled cancel": ` +
          'list narrows with --aggregate-type, --aggregate-id, --event-type, --due-before',
      );
    }
  }
  const dueBefore = single(strings, 'due-before');
  const filter: ScheduledFilter = {
    aggregateType: single(strings, 'aggregate-type'),
    aggregateId: single(strings, 'aggregate-id'),
    eventType: single(strings, 'event-type'),
    dueBefore: dueBefore === undefined ? undefined : time('due-before', dueBefore),
  };
  const outbox = single(strings, 'outbox-collection');
  return {
    action,
    uri,
    filter: Object.fromEntries(
      Object.entries(filter).filter(([, value]) => value !== undefined),
    ) as ScheduledFilter,
    eventIds,
    limit: positive('limit', single(strings, 'limit'), 100),
    dryRun: values['dry-run'] === true,
    json: values.json === true,
    collections: outbox === undefined ? {} : { outbox },
  };
}
