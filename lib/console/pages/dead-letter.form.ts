import { DeadLetterFilterError, type DeadLetterFilter } from '../../operations/dead-letter.filter';
import { field, fields } from '../http/console-request';
import { html, type Html } from '../render/html';
import type { DeadLetterKind } from '../reads/dead-letter-pages.reader';

const TEXT_FIELDS = ['aggregateType', 'aggregateId', 'error', 'consumer', 'topic'] as const;
const RELAY_ONLY = new Set(['aggregateType']);
const CONSUMER_ONLY = new Set(['consumer', 'topic']);

export function kindOf(source: unknown): DeadLetterKind {
  return field(source, 'kind') === 'consumer' ? 'consumer' : 'relay';
}

function date(source: unknown, name: 'since' | 'until'): Date | undefined {
  const text = field(source, name);
  if (text === undefined) return undefined;
  const value = new Date(text);
  if (Number.isNaN(value.getTime())) {
    throw new DeadLetterFilterError(`"${name}" must be a time (ISO 8601), got "${text}"`);
  }
  return value;
}

/**
 * The dead-letter filter of a query string or form, with the CLI's fields: `eventType` (comma
 * separated: any of them), `aggregateType` (relay), `aggregateId`, `error` (text contained),
 * `since`/`until` (ISO 8601), `consumer`/`topic` (consumer), and `eventId` (repeated: a selection).
 */
export function filterFrom(source: unknown, kind: DeadLetterKind): DeadLetterFilter {
  const filter: DeadLetterFilter = {};
  const types = field(source, 'eventType')
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (types?.length) filter.eventType = types.length === 1 ? types[0] : types;
  for (const name of TEXT_FIELDS) {
    if ((kind === 'relay' ? CONSUMER_ONLY : RELAY_ONLY).has(name)) continue;
    const value = field(source, name);
    if (value !== undefined) filter[name] = value;
  }
  const since = date(source, 'since');
  const until = date(source, 'until');
  if (since) filter.since = since;
  if (until) filter.until = until;
  const ids = fields(source, 'eventId');
  if (ids.length > 0) filter.eventIds = ids;
  return filter;
}

/** The filter as hidden fields of a form, so a confirmation carries exactly what was previewed. */
export function hiddenFilter(kind: DeadLetterKind, filter: DeadLetterFilter): Html {
  const pairs: Array<[string, string]> = [['kind', kind]];
  if (filter.eventType) {
    pairs.push(['eventType', ([] as string[]).concat(filter.eventType).join(',')]);
  }
  for (const name of TEXT_FIELDS) {
    const value = filter[name];
    if (typeof value === 'string') pairs.push([name, value]);
  }
  if (filter.since) pairs.push(['since', filter.since.toISOString()]);
  if (filter.until) pairs.push(['until', filter.until.toISOString()]);
  for (const id of filter.eventIds ?? []) pairs.push(['eventId', id]);
  return html`${pairs.map(([n, v]) => html`<input type="hidden" name="${n}" value="${v}" />`)}`;
}

/** The filter in words, as the preview and the outcome show it. */
export function describeFilter(kind: DeadLetterKind, filter: DeadLetterFilter): string {
  const parts = Object.entries(filter).map(
    ([k, v]) =>
      `${k}=${v instanceof Date ? v.toISOString() : Array.isArray(v) ? v.join(',') : String(v)}`,
  );
  return `${kind} dead letters${parts.length ? ` where ${parts.join(' and ')}` : ' (all)'}`;
}
