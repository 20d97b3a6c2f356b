import type { ConsoleRequest } from '../http/console-request';

/** The console's session cookie: a random id and its HMAC (`<id>.<mac>`), HttpOnly, SameSite=Strict. */
export const SESSION_COOKIE = 'outbox_console_session';

/** The value of cookie `name` in the request's `Cookie` header. */
export function readCookie(request: ConsoleRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  const text = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name)
      return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** A `Set-Cookie` value for the session, scoped to the console's path; Secure over HTTPS. */
export function sessionCookie(value: string, path: string, secure: boolean): string {
  return (
    `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=${path}; HttpOnly; SameSite=Strict` +
    (secure ? '; Secure' : '')
  );
}
