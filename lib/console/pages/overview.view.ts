import { formatAge, formatCount, formatTime } from '../render/format';
import { html, type Html } from '../render/html';
import { lineChart } from '../render/svg-chart';
import { safeError } from '../render/redact';
import type { OverviewData } from '../reads/overview.reader';

function card(label: string, value: string, id: string, tone = ''): Html {
  return html`<div class="card" data-metric="${id}">
    <div class="label">${label}</div>
    <div class="value ${tone}">${value}</div>
  </div>`;
}

/** The overview page's body. */
export function overviewView(d: OverviewData, base: string): Html {
  const s = d.relay.status;
  const b = d.backlog;
  const window = { from: d.charts.from, to: d.charts.to };
  const partitions = s.partitions ?? [];
  return html` <p class="muted">
      Read at ${formatTime(d.at)}; this page reloads every 5 s with JavaScript on.
    </p>
    <section class="cards">
      ${card('Pending', formatCount(b.pending.count, b.pending.capped), 'pending', b.pending.count > 0 ? 'warn' : 'ok')}
      ${card('Oldest pending', formatAge(b.oldestPendingAgeMs), 'oldest-pending')}
      ${card('Scheduled', formatCount(b.scheduled.count, b.scheduled.capped), 'scheduled')}
      ${card('Overdue', formatCount(b.overdue.count, b.overdue.capped), 'overdue', b.overdue.count > 0 ? 'bad' : '')}
      ${card('Relay dead letters', formatCount(d.relayDeadLetters.count, d.relayDeadLetters.capped), 'relay-dead-letters', d.relayDeadLetters.count > 0 ? 'bad' : '')}
      ${card('Published (this process)', formatCount(d.relay.metrics.published), 'published')}
    </section>
    <h2>Last 15 minutes</h2>
    <div class="charts">
      ${lineChart('Published per second', d.charts.published, window, 'events/s')}
      ${lineChart('Lag: oldest pending age', d.charts.lag, window, 's')}
      ${lineChart('Pending (relay sweeps)', d.charts.pending, window, 'events')}
    </div>
    <h2>Relay</h2>
    <table>
      <tr>
        <th>This process</th>
        <th>Role</th>
        <th>Stream</th>
        <th>Fencing</th>
        <th>In flight</th>
        <th>Broker</th>
        <th>Checkpoint age</th>
      </tr>
      <tr data-relay-role="${s.role}">
        <td>${s.running ? 'running' : 'not running here'}</td>
        <td>${s.role}</td>
        <td>
          ${s.stream}${s.streamError ? html` <span class="bad">${safeError(s.streamError)}</span>` : ''}
        </td>
        <td>${s.fencing ?? ''}</td>
        <td>${s.inFlight.events} events, ${s.inFlight.bytes} bytes</td>
        <td>
          ${s.configurationError ? html`<span class="bad">${safeError(s.configurationError)}</span>` : s.brokerPausedUntil ? html`<span class="bad">paused until ${formatTime(s.brokerPausedUntil)}</span>` : 'ok'}
          (${d.relay.metrics.outages} outage(s))
        </td>
        <td>${formatAge(d.relay.metrics.checkpointAgeMs)}</td>
      </tr>
    </table>
    ${
      s.heldDestinations.length > 0
        ? html`<h2>Held destinations</h2>
            <table>
              <tr>
                <th>Destination</th>
                <th>Since</th>
                <th>Retry at</th>
                <th>Failures</th>
                <th>Last error</th>
              </tr>
              ${s.heldDestinations.map(
                (h) =>
                  html`<tr>
                    <td>${h.destination}</td>
                    <td>${formatTime(h.since)}</td>
                    <td>${formatTime(h.retryAt)}</td>
                    <td>${h.failures}</td>
                    <td>${safeError(h.lastError)}</td>
                  </tr>`,
              )}
            </table>`
        : ''
    }
    ${
      partitions.length > 0
        ? html`<h2>Partitions (as this process sees them)</h2>
            <table>
              <tr>
                <th>Partition</th>
                <th>Owner</th>
                <th>Owned here</th>
                <th>Stream</th>
                <th>Pending</th>
                <th>Oldest pending</th>
              </tr>
              ${partitions.map(
                (p) =>
                  html`<tr>
                    <td>${p.partition}</td>
                    <td>${p.owner ?? 'free'}</td>
                    <td>${p.owned ? 'yes' : 'no'}</td>
                    <td>${p.stream}</td>
                    <td>${formatCount(p.pendingCount)}</td>
                    <td>${formatAge(p.oldestPendingAgeMs)}</td>
                  </tr>`,
              )}
            </table>`
        : ''
    }
    <h2>Leases and checkpoints (stored)</h2>
    <table>
      <tr>
        <th>Lease</th>
        <th>Holder</th>
        <th>Fencing</th>
        <th>Expires</th>
        <th></th>
      </tr>
      ${d.leases.map(
        (l) =>
          html`<tr>
            <td><code>${l.id}</code></td>
            <td>${l.owner ?? 'free'}</td>
            <td>${l.fencing ?? ''}</td>
            <td>${formatTime(l.expiresAt)}</td>
            <td class="${l.live ? 'ok' : 'warn'}">${l.live ? 'held' : 'expired'}</td>
          </tr>`,
      )}
      ${
        d.leases.length === 0
          ? html`<tr>
              <td colspan="5">No relay lease stored yet.</td>
            </tr>`
          : ''
      }
    </table>
    <table>
      <tr>
        <th>Checkpoint</th>
        <th>Saved</th>
        <th>Age</th>
        <th>Position</th>
      </tr>
      ${d.checkpoints.map(
        (c) =>
          html`<tr>
            <td><code>${c.id}</code></td>
            <td>${formatTime(c.savedAt)}</td>
            <td>${c.savedAt ? formatAge(d.at.getTime() - c.savedAt.getTime()) : ''}</td>
            <td>${c.hasPosition ? 'resume token' : 'none (drains the collection)'}</td>
          </tr>`,
      )}
    </table>
    <h2>Consumers</h2>
    <table>
      <tr>
        <th>Consumer</th>
        <th>Applied (recorded)</th>
        <th>Failing now</th>
        <th>Dead-lettered</th>
      </tr>
      ${d.consumers.map(
        (c) =>
          html`<tr data-consumer="${c.consumer}">
            <td>${c.consumer}</td>
            <td>${formatCount(c.applied.count, c.applied.capped)}</td>
            <td class="${c.failing ? 'warn' : ''}">${c.failing}</td>
            <td class="${c.deadLettered ? 'bad' : ''}">
              <a
                href="${base}/dead-letters?kind=consumer&consumer=${encodeURIComponent(c.consumer)}"
                >${c.deadLettered}</a
              >
            </td>
          </tr>`,
      )}
      ${
        d.consumers.length === 0
          ? html`<tr>
              <td colspan="4">
                No @IdempotentHandler consumer in this app (list others with the consumers option).
              </td>
            </tr>`
          : ''
      }
    </table>
    <p>
      This process's consumers: ${d.consumerTotals.applied} applied, ${d.consumerTotals.failures}
      failed attempts, ${d.consumerTotals.deadLettered} dead-lettered since start.
    </p>
    <p><a href="${base}">Refresh</a> · <a href="${base}/api/overview">JSON</a></p>`;
}
