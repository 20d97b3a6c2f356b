import { CliUsageError, defined } from './cli-flags';
import type { CliTenant, CommandLine } from './cli-flags';

export type ScheduledAction = CommandLine<'scheduled'>['action'];

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
  /** `--tenant`: the tenant's database, its events only. */
  tenant?: CliTenant;
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
  --tenant <id>               with tenants: work in this tenant's database, on its events only
  --tenant-database <name>    the tenant's database, when it is not named like the tenant
`;

/**
 * `scheduled <list|cancel> [options]`, checked; throws `CliUsageError`. Each action's own flags
 * are checked by `parseCommandLine`.
 */
export function scheduledCommand(
  { action, flags }: CommandLine<'scheduled'>,
  env: Record<string, string | undefined>,
): ScheduledCommand {
  const uri = flags.mongoUri(env);
  const eventIds = flags.list('event-id') ?? [];
  const tenant = flags.tenant();
  if (action === 'cancel' && eventIds.length === 0) {
    throw new CliUsageError('scheduled cancel needs --event-id <id> (repeat it for several)');
  }
  return {
    action,
    uri,
    filter: defined({
      aggregateType: flags.single('aggregate-type'),
      aggregateId: flags.single('aggregate-id'),
      eventType: flags.single('event-type'),
      dueBefore: flags.time('due-before'),
    }),
    collections: defined({ outbox: flags.single('outbox-collection') }),
    eventIds,
    limit: flags.positive('limit', 100),
    dryRun: flags.on('dry-run'),
    json: flags.on('json'),
    ...(tenant ? { tenant } : {}),
  };
}
