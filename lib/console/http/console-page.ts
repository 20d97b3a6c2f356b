import { Inject, Injectable } from '@nestjs/common';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { layout, type ConsolePage } from '../render/layout';
import type { Html } from '../render/html';
import { CONSOLE_SESSION } from '../security/console-response.interceptor';
import { CsrfTokens } from '../security/csrf.tokens';
import { ConsoleLinks } from './console-links';
import { field, type ConsoleRequest } from './console-request';
import { CSRF_FIELD, CSRF_HEADER } from '../security/csrf.tokens';

export const HTML_TYPE = 'text/html; charset=utf-8';

/** What every page controller needs: links, the page shell, the request's CSRF token. */
@Injectable()
export class ConsolePageKit {
  constructor(
    readonly links: ConsoleLinks,
    private readonly csrf: CsrfTokens,
    @Inject(OUTBOX_CONSOLE_OPTIONS) readonly options: ResolvedConsoleOptions,
  ) {}

  get base(): string {
    return this.links.base;
  }

  render(page: ConsolePage, title: string, body: Html, refreshSeconds?: number): string {
    return layout(this.base, page, title, body, {
      refreshSeconds,
      readOnly: !this.options.actions,
    }).text;
  }

  tokenOf(request: ConsoleRequest): string {
    return this.csrf.tokenFor(String(request[CONSOLE_SESSION]), request);
  }

  /** Refuses (403) an action when actions are off, or without the session's CSRF token. */
  checkAction(request: ConsoleRequest): void {
    this.csrf.verifyAction(
      request,
      this.options.actions,
      field(request.body, CSRF_FIELD) ?? headerOf(request),
    );
  }
}

function headerOf(request: ConsoleRequest): string | undefined {
  const value = request.headers[CSRF_HEADER];
  return Array.isArray(value) ? value[0] : value;
}
