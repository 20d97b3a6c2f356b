import type { OutboxDoc } from '../../documents/outbox-event.document';
import { formatTime } from '../render/format';
import { html, type Html } from '../render/html';
import { facts, jsonBlock } from '../render/layout';
import { redactPayload, redactValueText, safeError, type ConsoleRedact } from '../render/redact';
import type { EventJourney } from '../reads/event.reader';

/** The lookup form: an event id, or an aggregate. */
export function lookupForm(
  base: string,
  q: { eventId?: string; aggregateType?: string; aggregateId?: string },
): Html {
  return html`<form class="filter" method="get" action="${base}/events">
    <label>Event id<input name="eventId" value="${q.eventId ?? ''}" size="38" /></label>
    <span>or</span>
    <label>Aggregate type<input name="aggregateType" value="${q.aggregateType ?? ''}" /></label>
    <label>Aggregate id<input name="aggregateId" value="${q.aggregateId ?? ''}" /></label>
    <button type="submit" class="primary">Look up</button>
  </form>`;
}

function statusOf(e: Pick<OutboxDoc, 'status'>): Html {
  return html`<span class="status status-${e.status}">${e.status}</span>`;
}

/** An aggregate's events in order, each linking to its page. */
export function aggregateTable(base: string, events: OutboxDoc[], current?: string): Html {
  if (events.length === 0) return html`<p>No events of this aggregate in the outbox.</p>`;
  return html`<table>
    <tr>
      <th>#</th>
      <th>Event</th>
      <th>Type</th>
      <th>Status</th>
      <th>Occurred</th>
      <th>Published</th>
    </tr>
    ${events.map((e) => html`<tr${e.eventId === current ? html` class="current"` : ''}><td>${e.sequence ?? ''}</td><td><a href="${base}/events?eventId=${encodeURIComponent(e.eventId)}"><code>${e.eventId}</code></a></td><td>${e.eventType}</td><td>${statusOf(e)}</td><td>${formatTime(e.occurredAt)}</td><td>${formatTime(e.publishedAt)}</td></tr>`)}
  </table>`;
}

/** One event's page body: document, publication, consumers, dead letters, schedule, aggregate. */
export function eventView(base: string, j: EventJourney, redact: ConsoleRedact | undefined): Html {
  const e = j.event;
  const letter = j.relayDeadLetter;
  const source = e ?? letter;
  if (!source) {
    return html`<p class="notice">
      No event <code>${j.eventId}</code> in the outbox or the dead letters (never written, rolled
      back, or removed by retention).
    </p>`;
  }
  const applied = new Map(j.processed.map((p) => [p.consumer, p]));
  const failing = new Map(j.consumerLetters.map((l) => [l.consumer, l]));
  const consumers = [...new Set([...j.consumers, ...failing.keys()])];
  return html` <h2>Event</h2>
    ${facts([
      ['Event id', html`<code data-field="eventId">${source.eventId}</code>`],
      ['Type', source.eventType],
      [
        'Aggregate',
        html`<a
          href="${base}/events?aggregateType=${encodeURIComponent(source.aggregateType)}&aggregateId=${encodeURIComponent(source.aggregateId)}"
          >${source.aggregateType} ${source.aggregateId}</a
        >`,
      ],
      [
        'Status',
        e
          ? html`<span data-field="status">${statusOf(e)}</span>`
          : html`<span class="status status-dead" data-field="status">dead-lettered</span>`,
      ],
      ['Occurred (written)', formatTime(source.occurredAt)],
      ['Sequence', source.sequence ?? ''],
      ['Published', html`<span data-field="publishedAt">${formatTime(e?.publishedAt)}</span>`],
      ['Topic', j.topic ?? 'unknown here (no relay in this app)'],
      ['Attempts', e?.attempts ?? letter?.attempts ?? 0],
      ['Last error', safeError(e?.lastError ?? letter?.lastError)],
      ['Scheduled for', formatTime(source.availableAt)],
      ['Cancelled', formatTime(e?.cancelledAt)],
    ])}
    <h2>Payload${redact ? ' (redacted)' : ''}</h2>
    <div data-field="payload">${jsonBlock(redactPayload(source.payload, redact))}</div>
    <h2>Consumers</h2>
    <table>
      <tr>
        <th>Consumer</th>
        <th>State</th>
        <th>When</th>
        <th>Where (topic/partition/offset)</th>
        <th>Attempts</th>
        <th>Last error</th>
      </tr>
      ${consumers.map((name) => {
        const p = applied.get(name);
        const f = failing.get(name);
        const state = p ? 'applied' : f ? f.status : 'not applied (or record expired)';
        return html`<tr data-consumer="${name}">
          <td>${name}</td>
          <td class="status status-${p ? 'applied' : f ? 'dead' : ''}">${state}</td>
          <td>${formatTime(p?.processedAt ?? f?.lastFailedAt)}</td>
          <td>${f ? `${f.topic}/${f.partition}/${f.offset}` : ''}</td>
          <td>${f?.attempts ?? ''}</td>
          <td>${safeError(f?.lastError)}</td>
        </tr>`;
      })}
      ${
        consumers.length === 0
          ? html`<tr>
              <td colspan="6">No consumer known to this app.</td>
            </tr>`
          : ''
      }
    </table>
    ${j.consumerLetters.map(
      (l) =>
        html`<h2>Dead letter of ${l.consumer}</h2>
          ${facts([
            ['Reason', l.reason ?? ''],
            ['Dead-lettered', formatTime(l.deadLetteredAt)],
            ['Value bytes', l.valueBytes],
          ])}${jsonBlock(redactValueText(l.value, redact))}`,
    )}
    ${
      letter
        ? html`<h2>Relay dead letter</h2>
            ${facts([
              ['Reason', letter.reason],
              ['Dead-lettered', formatTime(letter.deadLetteredAt)],
              ['Attempts', letter.attempts],
            ])}
            <table>
              <tr>
                <th>At</th>
                <th>Attempt</th>
                <th>Error</th>
              </tr>
              ${(letter.errors ?? []).map(
                (x) =>
                  html`<tr>
                    <td>${formatTime(x.at)}</td>
                    <td>${x.attempt}</td>
                    <td>${safeError(x.error)}</td>
                  </tr>`,
              )}
            </table>`
        : ''
    }
    <h2>Its aggregate's recent events</h2>
    ${aggregateTable(base, j.aggregate, source.eventId)}`;
}
