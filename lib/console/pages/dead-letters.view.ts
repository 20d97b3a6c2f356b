import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import type { DeadLetterFilter } from '../../operations/dead-letter.filter';
import type { DeadLetterOutcome, DeadLetterPreview } from '../actions/dead-letter.actions';
import { CSRF_FIELD } from '../security/csrf.tokens';
import { formatTime } from '../render/format';
import { html, type Html } from '../render/html';
import { safeError } from '../render/redact';
import type { DeadLetterKind, DeadLetterPage } from '../reads/dead-letter-pages.reader';
import { describeFilter, hiddenFilter } from './dead-letter.form';

interface ListContext {
  base: string;
  kind: DeadLetterKind;
  filter: DeadLetterFilter;
  query: Record<string, string | undefined>;
  csrf: string;
  actions: boolean;
}

function filterForm(c: ListContext): Html {
  const q = c.query;
  const input = (name: string, label: string, placeholder = '') =>
    html`<label
      >${label}<input name="${name}" value="${q[name] ?? ''}" placeholder="${placeholder}"
    /></label>`;
  return html`<form class="filter" method="get" action="${c.base}/dead-letters">
    <label
      >Kind<select name="kind">
        <option value="relay" ${c.kind === 'relay' ? html` selected` : ''}>relay</option>
        <option value="consumer" ${c.kind === 'consumer' ? html` selected` : ''}>consumer</option>
      </select></label
    >
    ${input('eventType', 'Event type', 'A,B')}
    ${c.kind === 'relay' ? input('aggregateType', 'Aggregate type') : html`${input('consumer', 'Consumer')}${input('topic', 'Topic')}`}
    ${input('aggregateId', 'Aggregate id')} ${input('error', 'Error contains')}
    ${input('since', 'Since', 'ISO time')} ${input('until', 'Until', 'ISO time')}
    <button type="submit">Filter</button>
  </form>`;
}

function row(c: ListContext, l: DeadLetterPage['rows'][number]): Html {
  const consumer = c.kind === 'consumer' ? (l as ConsumerDeadLetterDocument) : undefined;
  const relay = c.kind === 'relay' ? (l as OutboxDeadLetter) : undefined;
  const id = l.eventId ?? '';
  return html`<tr data-event-id="${id}">
    ${c.actions ? html`<td>${id ? html`<input type="checkbox" name="eventId" value="${id}" aria-label="select ${id}" />` : ''}</td>` : ''}
    <td>
      ${id ? html`<a href="${c.base}/events?eventId=${encodeURIComponent(id)}"><code>${id}</code></a>` : '(no event id)'}
    </td>
    <td>
      ${relay ? `${relay.aggregateType} ${relay.aggregateId}` : `${consumer!.consumer} · ${consumer!.topic}/${consumer!.partition}/${consumer!.offset}`}
    </td>
    <td>${relay?.eventType ?? ''}</td>
    <td>${l.reason ?? ''}</td>
    <td>${l.attempts}</td>
    <td>${safeError(l.lastError)}</td>
    <td>${formatTime(l.deadLetteredAt)}</td>
  </tr>`;
}

/** The dead-letter list: filter, page, and (with actions) selection and filter actions. */
export function deadLettersView(c: ListContext, page: DeadLetterPage): Html {
  const table = html`<table>
    <tr>
      ${c.actions ? html`<th><input type="checkbox" data-select-all="eventId" aria-label="select all" /></th>` : ''}
      <th>Event</th>
      <th>${c.kind === 'relay' ? 'Aggregate' : 'Consumer · where'}</th>
      <th>Type</th>
      <th>Reason</th>
      <th>Attempts</th>
      <th>Last error</th>
      <th>Dead-lettered</th>
    </tr>
    ${page.rows.map((l) => row(c, l))}
    ${
      page.rows.length === 0
        ? html`<tr>
            <td colspan="8">No dead letters match.</td>
          </tr>`
        : ''
    }
  </table>`;
  const next = page.next
    ? html`<p class="pager">
        <a
          rel="next"
          href="${c.base}/dead-letters?${new URLSearchParams({ ...definedOnly(c.query), after: page.next }).toString()}"
          >Next page</a
        >
      </p>`
    : '';
  if (!c.actions) return html`${filterForm(c)}${table}${next}`;
  return html`${filterForm(c)}
    <form method="post" action="${c.base}/dead-letters/preview">
      <input type="hidden" name="${CSRF_FIELD}" value="${c.csrf}" />
      ${hiddenFilter(c.kind, { ...c.filter, eventIds: undefined })}
      <div class="actions">
        <button
          name="action"
          value="requeue"
          formaction="${c.base}/dead-letters/preview?scope=selection"
        >
          Requeue selected…
        </button>
        <button
          name="action"
          value="purge"
          class="danger"
          formaction="${c.base}/dead-letters/preview?scope=selection"
        >
          Purge selected…
        </button>
        <button
          name="action"
          value="requeue"
          formaction="${c.base}/dead-letters/preview?scope=filter"
        >
          Requeue all matching…
        </button>
        <button
          name="action"
          value="purge"
          class="danger"
          formaction="${c.base}/dead-letters/preview?scope=filter"
        >
          Purge all matching…
        </button>
      </div>
      ${table}
    </form>
    ${next}`;
}

function definedOnly(q: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(q).filter(([k, v]) => v !== undefined && k !== 'after'),
  ) as Record<string, string>;
}

/** The dry run's count and what a confirmation will do. */
export function previewView(base: string, p: DeadLetterPreview, csrf: string): Html {
  return html`<p class="notice" data-preview-count="${p.count}">
      ${p.action === 'requeue' ? 'Requeue' : 'Purge'}
      <b>${p.count}</b> ${describeFilter(p.kind, p.filter)}?
      ${p.action === 'purge' ? ' Purged relay dead letters are never published.' : ''} Letters
      dead-lettered after this preview are left out.
    </p>
    ${p.eventIds.length ? html`<p>Events: ${p.eventIds.map((id) => html`<code>${id}</code> `)}${p.count > p.eventIds.length ? '…' : ''}</p>` : ''}
    ${p.refused.length ? html`<p class="bad">Would be refused: ${p.refused.map((r) => html`<code>${r.eventId}</code> (${r.error}) `)}</p>` : ''}
    <form method="post" action="${base}/dead-letters/apply">
      <input type="hidden" name="${CSRF_FIELD}" value="${csrf}" />
      <input type="hidden" name="action" value="${p.action}" />
      ${hiddenFilter(p.kind, p.filter)}
      <div class="actions">
        <button
          type="submit"
          class="${p.action === 'purge' ? 'danger' : 'primary'}"
          ${p.count === 0 ? html` disabled` : ''}
        >
          Confirm: ${p.action} ${p.count}
        </button>
        <a href="${base}/dead-letters?kind=${p.kind}">Back</a>
      </div>
    </form>`;
}

export function outcomeView(base: string, o: DeadLetterOutcome): Html {
  return html`<p class="notice" data-outcome-done="${o.done}">
      ${o.action === 'requeue' ? 'Requeued' : 'Purged'}
      <b>${o.done}</b> ${describeFilter(o.kind, o.filter)}.
    </p>
    ${
      o.failed.length
        ? html`<table>
            <tr>
              <th>Not done</th>
              <th>Why</th>
            </tr>
            ${o.failed.map(
              (f) =>
                html`<tr>
                  <td><code>${f.eventId}</code></td>
                  <td>${safeError(f.error)}</td>
                </tr>`,
            )}
          </table>`
        : ''
    }
    <p><a href="${base}/dead-letters?kind=${o.kind}">Back to the dead letters</a></p>`;
}
