import { parseArgs } from 'node:util';
import type { DeadLetterFilter } from '../operations/dead-letter.filter';

export const DEAD_LETTER_ACTIONS = ['list', 'count', 'requeue', 'purge'] as const;
export type DeadLetterAction = (typeof DEAD_LETTER_ACTIONS)[number];

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
}

export const USAGE = `Usage: nestjs-outbox dead-letters <list|count|requeue|purge> [options]

  --uri <uri>                 MongoDB connection string (default: $MONGODB_URI); never printed
  --kind relay|consumer       the relay's dead letters (default) or the consumers'
  --filter <json>             a filter as JSON: {"eventType","aggregateType","aggregateId",
                              "error","since","until","eventIds"}; the flags below add to it
  --event-type <type>         (repeatable) --aggregate-type <type>  --aggregate-id <id>
  --error <text>              the last error contains this text (case-insensitive)
  --since <time> --until <time>  dead-lettered in this range (ISO 8601)
  --event-id <id>             (repeatable)
  --consumer <name>  --topic <topic>   consumer dead letters: of this consumer, from this topic
  --limit <n>                 list: at most n dead letters (default 100)
  --batch-size <n>            requeue: events per transaction (default 100)
  --dry-run                   requeue, purge: show what would happen, change nothing
  --yes                       purge: do not ask for confirmation
  --json                      print JSON
  --outbox-collection <name>  --dead-letters-collection <name>
  --consumer-dead-letters-collection <name>   non-default collection names
`;

/** A command line that cannot be run; the message says what to fix. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

function time(name: string, value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new CliUsageError(
      `--${name} "${value}" is not a time (use ISO 8601, e.g. 2026-12-01T10:00:00Z)`,
    );
  }
  return date;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new CliUsageError(`--${name} must be a positive integer`);
  return n;
}

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

/** `dead-letters <action> [options]`, checked; throws `CliUsageError`. */
export function parseDeadLettersCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): DeadLettersCommand {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      uri: { type: 'string' },
      kind: { type: 'string' },
      consumer: { type: 'string' },
      topic: { type: 'string' },
      filter: { type: 'string' },
      'event-type': { type: 'string', multiple: true },
      'aggregate-type': { type: 'string' },
      'aggregate-id': { type: 'string' },
      error: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'event-id': { type: 'string', multiple: true },
      limit: { type: 'string' },
      'batch-size': { type: 'string' },
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean' },
      json: { type: 'boolean' },
      'outbox-collection': { type: 'string' },
      'dead-letters-collection': { type: 'string' },
      'consumer-dead-letters-collection': { type: 'string' },
    },
  });
  const [group, action, ...extra] = positionals;
  if (group !== 'dead-letters') {
    throw new CliUsageError(group ? `unknown command "${group}"` : 'no command given');
  }
  if (!DEAD_LETTER_ACTIONS.includes(action as DeadLetterAction)) {
    throw new CliUsageError(
      action
        ? `unknown action "${action}" (use ${DEAD_LETTER_ACTIONS.join(', ')})`
        : 'no action given',
    );
  }
  if (extra.length > 0) throw new CliUsageError(`unexpected argument "${extra[0]}"`);
  const uri = values.uri ?? env.MONGODB_URI;
  if (!uri) throw new CliUsageError('no MongoDB connection string: pass --uri or set MONGODB_URI');

  const kind = values.kind ?? 'relay';
  if (kind !== 'relay' && kind !== 'consumer') {
    throw new CliUsageError(`--kind must be relay or consumer, got "${kind}"`);
  }
  if (kind === 'consumer' && action === 'requeue') {
    throw new CliUsageError(
      'consumer dead letters are requeued by the app that runs their @IdempotentHandler ' +
        '(it applies each one again): call OutboxConsumerDeadLetters.requeueMany() there',
    );
  }
  const filter = parseFilter(values.filter);
  const eventTypes = values['event-type'];
  if (eventTypes) filter.eventType = eventTypes.length === 1 ? eventTypes[0] : eventTypes;
  if (values['aggregate-type']) filter.aggregateType = values['aggregate-type'];
  if (values['aggregate-id']) filter.aggregateId = values['aggregate-id'];
  if (values.error) filter.error = values.error;
  if (values.since) filter.since = time('since', values.since);
  if (values.until) filter.until = time('until', values.until);
  if (values['event-id']) filter.eventIds = values['event-id'];
  if (values.consumer) filter.consumer = values.consumer;
  if (values.topic) filter.topic = values.topic;

  return {
    action: action as DeadLetterAction,
    kind,
    uri,
    filter,
    limit: positive('limit', values.limit, 100),
    batchSize: positive('batch-size', values['batch-size'], 100),
    dryRun: values['dry-run'] ?? false,
    yes: values.yes ?? false,
    json: values.json ?? false,
    collections: {
      ...(values['outbox-collection'] ? { outbox: values['outbox-collection'] } : {}),
      ...(values['dead-letters-collection']
        ? { deadLetters: values['dead-letters-collection'] }
        : {}),
      ...(values['consumer-dead-letters-collection']
        ? { consumerDeadLetters: values['consumer-dead-letters-collection'] }
        : {}),
    },
  };
}
