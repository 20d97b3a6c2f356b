/**
 * HTML built from templates whose every interpolated value is escaped, unless it is itself
 * `Html` made here. Pages are written only with `html`, so a value from the database (a
 * payload, an error, an id) can never become markup or script.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** `value` as HTML text, safe in element content and in quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => ENTITIES[c]);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

/** Tagged template: `html\`<td>${value}</td>\`` escapes `value`; arrays are joined; null/false are empty. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Markup that is already safe (made by this module's renderers only, e.g. an SVG chart). */
export function trusted(text: string): Html {
  return new Html(text);
}
