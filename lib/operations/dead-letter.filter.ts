import { OutboxError } from '../common/errors/outbox.error';

/**
 * Which dead letters an operation applies to. Every field is optional and they combine with
 * AND; an empty filter matches every dead letter.
 */
export interface DeadLetterFilter {
  /** One event type, or any of several. */
  eventType?: string | string[];
  aggregateType?: string;
  aggregateId?: string;
  /** Text the last error contains (case-insensitive), or a regular expression it matches. */
  error?: string | RegExp;
  /** Dead-lettered at or after this time. */
  since?: Date;
  /** Dead-lettered before this time. */
  until?: Date;
  /** These event ids only. */
  eventIds?: string[];
}

/** Thrown for a filter that cannot be used (unknown field, wrong type, bad time range). */
export class DeadLetterFilterError extends OutboxError {
  constructor(problem: string) {
    super(`Invalid dead-letter filter: ${problem}`, 'OUTBOX_DEAD_LETTER_FILTER', { problem });
  }
}

const FIELDS = new Set([
  'eventType',
  'aggregateType',
  'aggregateId',
  'error',
  'since',
  'until',
  'eventIds',
]);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
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
  for (const key of Object.keys(filter)) {
    if (!FIELDS.has(key)) {
      throw new DeadLetterFilterError(`unknown field "${key}" (use ${[...FIELDS].join(', ')})`);
    }
  }
  const query: Record<string, unknown> = {};
  const text = (name: keyof DeadLetterFilter, value: unknown) => {
    if (value === undefined) return;
    if (typeof value !== 'string' || value.length === 0)
      throw new DeadLetterFilterError(`"${name}" must be a non-empty string`);
    query[name] = value;
  };
  if (Array.isArray(filter.eventType)) {
    if (filter.eventType.some((type) => typeof type !== 'string'))
      throw new DeadLetterFilterError('"eventType" must be a string or an array of strings');
    query.eventType = { $in: filter.eventType };
  } else text('eventType', filter.eventType);
  text('aggregateType', filter.aggregateType);
  text('aggregateId', filter.aggregateId);
  if (filter.error !== undefined) {
    if (filter.error instanceof RegExp) query[fields.errorField] = filter.error;
    else if (typeof filter.error === 'string' && filter.error.length > 0)
      query[fields.errorField] = { $regex: escapeRegExp(filter.error), $options: 'i' };
    else throw new DeadLetterFilterError('"error" must be a non-empty string or a RegExp');
  }
  if (filter.since !== undefined || filter.until !== undefined) {
    const range: Record<string, Date> = {};
    for (const [name, op] of [
      ['since', '$gte'],
      ['until', '$lt'],
    ] as const) {
      const value = filter[name];
      if (value === undefined) continue;
      if (!isDate(value)) throw new DeadLetterFilterError(`"${name}" must be a valid Date`);
      range[op] = value;
    }
    if (range.$gte && range.$lt && range.$gte >= range.$lt)
      throw new DeadLetterFilterError('"since" must be before "until"');
    query[fields.timeField] = range;
  }
  if (filter.eventIds !== undefined) {
    if (!Array.isArray(filter.eventIds) || filter.eventIds.some((id) => typeof id !== 'string'))
      throw new DeadLetterFilterError('"eventIds" must be an array of strings');
    query.eventId = { $in: filter.eventIds };
  }
  return query;
}
