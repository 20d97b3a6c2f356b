import { html, type Html } from './html';

export interface ChartPoint {
  /** ms since the epoch */
  t: number;
  v: number;
}

const WIDTH = 480;
const HEIGHT = 140;
const PAD = { left: 48, right: 8, top: 10, bottom: 22 };

function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (max <= step * power) return step * power;
  return 10 * power;
}

/**
 * A line chart drawn on the server as SVG: `points` over the window `[from, to]` (ms), y from
 * 0 to a rounded maximum, labelled with `unit`. No script, no styles outside the console's CSS.
 */
export function lineChart(
  title: string,
  points: readonly ChartPoint[],
  window: { from: number; to: number },
  unit: string,
): Html {
  const max = niceMax(Math.max(0, ...points.map((p) => p.v)));
  const span = Math.max(1, window.to - window.from);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + ((t - window.from) / span) * plotW;
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
  const last = points.at(-1);
  const minutes = Math.round(span / 60_000);
  return html`<figure class="chart">
    <figcaption>
      ${title}${last ? html` <b>${formatValue(last.v)} ${unit}</b>` : ' (no samples yet)'}
    </figcaption>
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      role="img"
      aria-label="${title}"
    >
      <line
        class="axis"
        x1="${PAD.left}"
        y1="${PAD.top + plotH}"
        x2="${WIDTH - PAD.right}"
        y2="${PAD.top + plotH}"
      />
      <line
        class="axis"
        x1="${PAD.left}"
        y1="${PAD.top}"
        x2="${PAD.left}"
        y2="${PAD.top + plotH}"
      />
      <line
        class="grid"
        x1="${PAD.left}"
        y1="${y(max / 2)}"
        x2="${WIDTH - PAD.right}"
        y2="${y(max / 2)}"
      />
      <text x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${formatValue(max)}</text>
      <text x="${PAD.left - 4}" y="${y(max / 2) + 4}" text-anchor="end">
        ${formatValue(max / 2)}
      </text>
      <text x="${PAD.left - 4}" y="${PAD.top + plotH + 4}" text-anchor="end">0</text>
      <text x="${PAD.left}" y="${HEIGHT - 4}">-${minutes} min</text>
      <text x="${WIDTH - PAD.right}" y="${HEIGHT - 4}" text-anchor="end">now</text>
      ${points.length > 1 ? html`<polyline class="series" points="${line}" />` : ''}
      ${last ? html`<circle class="series" cx="${x(last.t).toFixed(1)}" cy="${y(last.v).toFixed(1)}" r="3" />` : ''}
    </svg>
  </figure>`;
}

function formatValue(v: number): string {
  if (v >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(1);
}
