import { ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { consoleUser, type ConsoleRequest } from '../http/console-request';
import { readCookie, SESSION_COOKIE } from './session-cookie';

/** The form field (and `x-outbox-console-csrf` header) that carries the token. */
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-outbox-console-csrf';

/**
 * Session-bound CSRF tokens. The session is a signed cookie the console issues (`<id>.<mac>`,
 * HMAC-SHA256 with `secret`); the token of a form is HMAC(secret, id + the user `authorize`
 * named). An action is accepted only with a valid cookie and the token of that cookie and user:
 * another site can neither read the token nor send the SameSite=Strict cookie.
 */
@Injectable()
export class CsrfTokens {
  constructor(@Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions) {}

  private mac(text: string): string {
    return createHmac('sha256', this.options.secret).update(text).digest('base64url');
  }

  /** A new session cookie value. */
  newSession(): string {
    const id = randomBytes(18).toString('base64url');
    return `${id}.${this.mac(`session|${id}`)}`;
  }

  /** The session id of the request's cookie, when its signature holds. */
  sessionOf(request: ConsoleRequest): string | undefined {
    const cookie = readCookie(request, SESSION_COOKIE);
    const dot = cookie?.indexOf('.') ?? -1;
    if (!cookie || dot < 1) return undefined;
    const id = cookie.slice(0, dot);
    return same(cookie.slice(dot + 1), this.mac(`session|${id}`)) ? id : undefined;
  }

  tokenFor(sessionId: string, request: ConsoleRequest): string {
    return this.mac(`csrf|${sessionId}|${consoleUser(request)}`);
  }

  /** Throws 403 when actions are off, or unless the request carries its session's token. */
  verifyAction(request: ConsoleRequest, actions: boolean, token: string | undefined): void {
    if (!actions) {
      throw new ForbiddenException('The outbox console is read-only (actions: false).');
    }
    this.verify(request, token);
  }

  /** Throws 403 unless the request carries its session's token (form field or header). */
  verify(request: ConsoleRequest, token: string | undefined): void {
    const session = this.sessionOf(request);
    if (!session || !token || !same(token, this.tokenFor(session, request))) {
      throw new ForbiddenException(
        'Missing or invalid CSRF token: reload the console page and try again.',
      );
    }
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
