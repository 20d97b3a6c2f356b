import { OutboxError } from '../common/errors/outbox.error';
import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';
import { escapeRegExp } from '../common/escape-reg-exp';

/**
 * Which dead letters an operation applies to. Every field is optional and they combine with
 * AND; an empty filter matches every dead letter.
 */
export interface DeadLetterFilter {
  /** One event type, or any of several. */
  eventType?: string | string[];
  /** Relay dead letters only (a consumer's keeps the Kafka message: filter by `topic`). */
  aggregateType?: string;
  /** For consumer dead letters: the message key, which the relay sets to the aggregate id. */
  aggregateId?: string;
  /** Text the last error contains (case-insensitive), or a regular expression it matches. */
  error?: string | RegExp;
  /** Dead-lettered at or after this time. */
  since?: Date;
  /** Dead-lettered before this time. */
  until?: Date;
  /** These event ids only. */
  eventIds?: string[];
  /** Consumer dead letters only: of this consumer (`@IdempotentHandler({ consumer })`). */
  consumer?: string;
  /** Consumer dead letters only: received on this topic. */
  topic?: string;
}

/** Thrown for a filter that cannot be used (unknown field, wrong type, bad time range). */
export class DeadLetterFilterError extends OutboxError {
  constructor(problem: string) {
    super(`Invalid dead-letter filter: ${problem}`, 'OUTBOX_DEAD_LETTER_FILTER', { problem });
  }
}

type Field = keyof DeadLetterFilter;
const COMMON: Field[] = ['eventType', 'aggregateId', 'error', 'since', 'until', 'eventIds'];
const RELAY_FIELDS = new Set<Field>([...COMMON, 'aggregateType']);
const CONSUMER_FIELDS = new Set<Field>([...COMMON, 'consumer', 'topic']);

function isDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** Checks `filter` against the fields of one kind of dead letter and returns its typed parts. */
function checked(filter: DeadLetterFilter, allowed: Set<Field>, kind: string) {
  for (const key of Object.keys(filter)) {
    if (!allowed.has(key as Field)) {
      throw new DeadLetterFilterError(
        `"${key}" is not a field of ${kind} dead letters (use ${[...allowed].join(', ')})`,
      );
    }
  }
  const text = (name: Field): string | undefined => {
    const value = filter[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0)
      throw new DeadLetterFilterError(`"${name}" must be a non-empty string`);
    return value;
  };
  let eventTypes: string[] | undefined;
  if (Array.isArray(filter.eventType)) {
    if (filter.eventType.some((type) => typeof type !== 'string'))
      throw new DeadLetterFilterError('"eventType" must be a string or an array of strings');
    eventTypes = filter.eventType;
  } else if (filter.eventType !== undefined) eventTypes = [text('eventType')!];
  let error: RegExp | { $regex: string; $options: string } | undefined;
  if (filter.error instanceof RegExp) error = filter.error;
  else if (typeof filter.error === 'string' && filter.error.length > 0)
    error = { $regex: escapeRegExp(filter.error), $options: 'i' };
  else if (filter.error !== undefined)
    throw new DeadLetterFilterError('"error" must be a non-empty string or a RegExp');
  let time: Record<string, Date> | undefined;
  for (const [name, op] of [
    ['since', '$gte'],
    ['until', '$lt'],
  ] as const) {
    const value = filter[name];
    if (value === undefined) continue;
    if (!isDate(value)) throw new DeadLetterFilterError(`"${name}" must be a valid Date`);
    (time ??= {})[op] = value;
  }
  if (time?.$gte && time.$lt && time.$gte >= time.$lt)
    throw new DeadLetterFilterError('"since" must be before "until"');
  if (
    filter.eventIds !== undefined &&
    (!Array.isArray(filter.eventIds) || filter.eventIds.some((id) => typeof id !== 'string'))
  )
    throw new DeadLetterFilterError('"eventIds" must be an array of strings');
  return {
    eventTypes,
    aggregateType: text('aggregateType'),
    aggregateId: text('aggregateId'),
    consumer: text('consumer'),
    topic: text('topic'),
    error,
    time,
    eventIds: filter.eventIds,
  };
}

/**
 * The filter as a query of the relay's dead-letter collection. The same query selects the
 * events still marked dead in the outbox (a dead-letter move that was interrupted) when
 * `errorField` is `deadLetter.error`.
 */
export function deadLetterQuery(
  filter: DeadLetterFilter,
  fields: { errorField: string; timeField: string } = {
    errorField: 'lastError',
    timeField: 'deadLetteredAt',
  },
): Record<string, unknown> {
  const f = checked(filter, RELAY_FIELDS, 'relay');
  const query: Record<string, unknown> = {};
  if (f.eventTypes)
    query.eventType = f.eventTypes.length === 1 ? f.eventTypes[0] : { $in: f.eventTypes };
  if (f.aggregateType) query.aggregateType = f.aggregateType;
  if (f.aggregateId) query.aggregateId = f.aggregateId;
  if (f.error) query[fields.errorField] = f.error;
  if (f.time) query[fields.timeField] = f.time;
  if (f.eventIds) query.eventId = { $in: f.eventIds };
  return query;
}

/**
 * The filter as a query of the consumers' dead letters (`status: 'dead'` documents of
 * `collections.consumerDeadLetters`): the event type is the message's `ce_type` header, the
 * aggregate id its key.
 */
export function consumerDeadLetterQuery(filter: DeadLetterFilter): Record<string, unknown> {
  const f = checked(filter, CONSUMER_FIELDS, 'consumer');
  const query: Record<string, unknown> = { status: 'dead' };
  if (f.eventTypes) {
    query.headers = {
      $elemMatch: { key: KAFKA_HEADERS.type, value: { $in: f.eventTypes } },
    };
  }
  if (f.aggregateId) query.key = f.aggregateId;
  if (f.consumer) query.consumer = f.consumer;
  if (f.topic) query.topic = f.topic;
  if (f.error) query.lastError = f.error;
  if (f.time) query.deadLetteredAt = f.time;
  if (f.eventIds) query.eventId = { $in: f.eventIds };
  return query;
}
