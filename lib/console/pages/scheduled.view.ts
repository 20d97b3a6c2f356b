import type { CancelScheduledResult } from '../../events/schedule/cancel-result';
import { CSRF_FIELD } from '../security/csrf.tokens';
import { formatAge, formatTime } from '../render/format';
import { html, type Html } from '../render/html';
import type { ScheduledPage } from '../reads/scheduled.reader';

/** Pending scheduled events by due time; with actions, a selection can be cancelled. */
export function scheduledView(
  base: string,
  page: ScheduledPage,
  c: { csrf: string; actions: boolean; now: number },
): Html {
  const table = html`<table>
    <tr>
      ${c.actions ? html`<th><input type="checkbox" data-select-all="eventId" aria-label="select all" /></th>` : ''}
      <th>Due</th>
      <th>In</th>
      <th>Event</th>
      <th>Type</th>
      <th>Aggregate</th>
    </tr>
    ${page.rows.map((e) => {
      const dueIn = e.availableAt!.getTime() - c.now;
      return html`<tr data-event-id="${e.eventId}">
        ${c.actions ? html`<td><input type="checkbox" name="eventId" value="${e.eventId}" aria-label="select ${e.eventId}" /></td>` : ''}
        <td>${formatTime(e.availableAt)}</td>
        <td class="${dueIn < 0 ? 'bad' : ''}">
          ${dueIn < 0 ? `overdue ${formatAge(-dueIn)}` : formatAge(dueIn)}
        </td>
        <td>
          <a href="${base}/events?eventId=${encodeURIComponent(e.eventId)}"
            ><code>${e.eventId}</code></a
          >
        </td>
        <td>${e.eventType}</td>
        <td>${e.aggregateType} ${e.aggregateId}</td>
      </tr>`;
    })}
    ${
      page.rows.length === 0
        ? html`<tr>
            <td colspan="6">No scheduled event is pending.</td>
          </tr>`
        : ''
    }
  </table>`;
  const next = page.next
    ? html`<p class="pager">
        <a rel="next" href="${base}/scheduled?after=${encodeURIComponent(page.next)}">Next page</a>
      </p>`
    : '';
  if (!c.actions) return html`${table}${next}`;
  return html`<form method="post" action="${base}/scheduled/cancel">
      <input type="hidden" name="${CSRF_FIELD}" value="${c.csrf}" />
      <div class="actions"><button type="submit" class="danger">Cancel selected</button></div>
      ${table}
    </form>
    ${next}`;
}

/** Each cancel's typed result (`CancelScheduledResult`), as the API returns it. */
export function cancelResultsView(base: string, results: CancelScheduledResult[]): Html {
  return html`<table>
      <tr>
        <th>Event</th>
        <th>Outcome</th>
        <th>Details</th>
      </tr>
      ${results.map(
        (r) =>
          html`<tr data-event-id="${r.eventId}" data-outcome="${r.outcome}">
            <td><code>${r.eventId}</code></td>
            <td>
              ${r.outcome}${r.outcome === 'cancelled' && r.alreadyCancelled ? ' (already)' : ''}
            </td>
            <td>
              ${
                r.outcome === 'cancelled'
                  ? `was due ${formatTime(r.availableAt)}, cancelled ${formatTime(r.cancelledAt)}`
                  : r.outcome === 'already-due'
                    ? `due since ${formatTime(r.availableAt)}: being published`
                    : r.outcome === 'published'
                      ? `published ${formatTime(r.publishedAt)}`
                      : ''
              }
            </td>
          </tr>`,
      )}
    </table>
    <p><a href="${base}/scheduled">Back to the scheduled events</a></p>`;
}
