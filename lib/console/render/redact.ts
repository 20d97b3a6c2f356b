import { redactCredentials } from '../../common/redact-credentials';

/** What the console shows in place of a hidden value. */
export const REDACTED = '[redacted]';

/**
 * Hides payload fields before anything is rendered: a list of field names or dot paths
 * (`card`, `customer.email`; a name without a dot is hidden at every depth), or a function
 * returning the payload to show.
 */
export type ConsoleRedact = readonly string[] | ((payload: unknown) => unknown);

function hidePaths(value: unknown, names: Set<string>, paths: Set<string>, at: string): unknown {
  if (Array.isArray(value)) return value.map((item) => hidePaths(item, names, paths, at));
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const path = at ? `${at}.${key}` : key;
    out[key] = names.has(key) || paths.has(path) ? REDACTED : hidePaths(field, names, paths, path);
  }
  return out;
}

/** `payload` as the console may show it. */
export function redactPayload(payload: unknown, redact: ConsoleRedact | undefined): unknown {
  if (!redact) return payload;
  if (typeof redact === 'function') return redact(payload);
  const names = new Set(redact.filter((r) => !r.includes('.')));
  const paths = new Set(redact.filter((r) => r.includes('.')));
  return hidePaths(payload, names, paths, '');
}

/**
 * A message value kept as text (a consumer dead letter): parsed and redacted when it is JSON;
 * hidden whole when it is not and redaction is on (its fields cannot be found).
 */
export function redactValueText(text: string | null, redact: ConsoleRedact | undefined): unknown {
  if (text === null) return null;
  try {
    return redactPayload(JSON.parse(text), redact);
  } catch {
    return redact ? REDACTED : text;
  }
}

/** Error texts shown by the console: connection-string credentials removed. */
export function safeError(text: string | undefined | null): string {
  return text ? redactCredentials(text) : '';
}
