/**
 * The console's stylesheet and script, served from its own path (`assets/console.css`,
 * `assets/console.js`) so the Content-Security-Policy needs no 'unsafe-inline'. Kept as text in
 * the package: nothing for the user to build or copy. Pages work without the script; it only
 * reloads pages that ask for it and ticks "select all" boxes.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6577; --line: #d9dee7; --bad: #b42318; --ok: #067647; --warn: #b54708; --accent: #1f5fbf; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f6f7f9; }
header { display: flex; gap: 24px; align-items: center; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
header nav a { margin-right: 16px; color: var(--muted); text-decoration: none; }
header nav a[aria-current=page] { color: var(--ink); font-weight: 600; border-bottom: 2px solid var(--accent); }
.brand { font-weight: 700; }
.mode { margin-left: auto; color: var(--muted); font-size: 12px; border: 1px solid var(--line); padding: 2px 8px; border-radius: 10px; }
main { padding: 16px 24px 48px; max-width: 1200px; }
h1 { font-size: 20px; margin: 4px 0 16px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 22px; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figure.chart svg { width: 480px; max-width: 100%; height: auto; display: block; }
figure.chart text { font-size: 10px; fill: var(--muted); }
figure.chart .axis { stroke: #9aa3b2; }
figure.chart .grid { stroke: var(--line); stroke-dasharray: 3 3; }
figure.chart polyline.series { fill: none; stroke: var(--accent); stroke-width: 2; }
figure.chart circle.series { fill: var(--accent); }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #fafbfc; }
td code, dd code { font-size: 12px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; border: 1px solid var(--line); padding: 10px 12px; border-radius: 6px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; word-break: break-all; }
pre.json { background: #fff; border: 1px solid var(--line); padding: 10px; border-radius: 6px; overflow: auto; max-height: 360px; }
.status { font-weight: 600; }
.status-published, .status-applied, .ok { color: var(--ok); }
.status-pending, .warn { color: var(--warn); }
.status-dead, .status-cancelled, .bad { color: var(--bad); }
form.filter { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 12px; }
form.filter label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 4px 6px; }
button { cursor: pointer; border: 1px solid var(--line); background: #fff; border-radius: 4px; }
button.danger { border-color: var(--bad); color: var(--bad); }
button.primary { border-color: var(--accent); background: var(--accent); color: #fff; }
.actions { display: flex; gap: 8px; margin: 8px 0; }
.notice { background: #fff8e6; border: 1px solid #f5d38a; padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
.pager { margin-top: 8px; }
`;

export const CONSOLE_JS = `'use strict';
(function () {
  var refresh = document.body.getAttribute('data-refresh');
  if (refresh) setTimeout(function () { location.reload(); }, Number(refresh) * 1000);
  document.addEventListener('change', function (event) {
    var box = event.target;
    if (!box || !box.matches || !box.matches('input[data-select-all]')) return;
    var boxes = document.querySelectorAll('input[name="' + box.getAttribute('data-select-all') + '"]');
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = box.checked;
  });
})();
`;
