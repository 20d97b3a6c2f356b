import { html, type Html } from './html';

export type ConsolePage = 'overview' | 'events' | 'dead-letters' | 'scheduled';

const NAV: Array<[ConsolePage, string, string]> = [
  ['overview', 'Overview', ''],
  ['events', 'Event', 'events'],
  ['dead-letters', 'Dead letters', 'dead-letters'],
  ['scheduled', 'Scheduled', 'scheduled'],
];

/**
 * The page shell: navigation, the console's own stylesheet and script (served from its path:
 * the CSP allows nothing inline), and `body`. `refreshSeconds` makes the script reload the page.
 */
export function layout(
  base: string,
  page: ConsolePage,
  title: string,
  body: Html,
  options: { refreshSeconds?: number; readOnly: boolean },
): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · outbox console</title>
<link rel="stylesheet" href="${base}/assets/console.css">
<script src="${base}/assets/console.js" defer></script>
</head>
<body${options.refreshSeconds ? html` data-refresh="${options.refreshSeconds}"` : ''}>
<header>
<b class="brand">outbox console</b>
<nav>${NAV.map(
    ([id, label, sub]) =>
      html`<a href="${base}${sub ? `/${sub}` : ''}" ${id === page ? html` aria-current="page"` : ''}
        >${label}</a
      >`,
  )}</nav>
${options.readOnly ? html`<span class="mode">read-only</span>` : ''}
</header>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A definition list of label/value pairs. */
export function facts(rows: Array<[string, unknown]>): Html {
  return html`<dl class="facts">
    ${rows.map(
      ([label, value]) =>
        html`<dt>${label}</dt>
          <dd>${value as string}</dd>`,
    )}
  </dl>`;
}

/** A JSON value, pretty-printed and escaped. */
export function jsonBlock(value: unknown): Html {
  return html`<pre class="json">${JSON.stringify(value, null, 2) ?? 'undefined'}</pre>`;
}
