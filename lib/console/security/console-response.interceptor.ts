import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import type { ConsoleRequest } from '../http/console-request';
import { ConsoleLinks } from '../http/console-links';
import { CsrfTokens } from './csrf.tokens';
import { SECURITY_HEADERS } from './security-headers';
import { sessionCookie } from './session-cookie';

/** The session id of a console request (from its cookie, or just issued). */
export const CONSOLE_SESSION = Symbol('outbox:console_session');

/**
 * On every console response (after access is granted): the security headers, and a session
 * cookie when the request has no valid one, so every page can carry its CSRF token.
 */
@Injectable()
export class ConsoleResponseInterceptor implements NestInterceptor {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly csrf: CsrfTokens,
    private readonly links: ConsoleLinks,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<ConsoleRequest>();
    const response = http.getResponse<unknown>();
    const adapter = this.adapterHost.httpAdapter;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      adapter.setHeader(response, name, value);
    }
    let session = this.csrf.sessionOf(request);
    if (!session) {
      const value = this.csrf.newSession();
      session = value.slice(0, value.indexOf('.'));
      adapter.setHeader(
        response,
        'Set-Cookie',
        sessionCookie(value, this.links.base, request.protocol === 'https'),
      );
    }
    request[CONSOLE_SESSION] = session;
    return next.handle();
  }
}
