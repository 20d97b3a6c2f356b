import { Inject, Injectable } from '@nestjs/common';
import { ApplicationConfig } from '@nestjs/core';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';

/** The console's absolute paths (the app's global prefix, then `path`), for links and forms. */
@Injectable()
export class ConsoleLinks {
  constructor(
    private readonly config: ApplicationConfig,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  get base(): string {
    const prefix = this.config.getGlobalPrefix().replace(/^\/+|\/+$/g, '');
    return `/${[prefix, this.options.path].filter(Boolean).join('/')}`;
  }

  /** `base` + `/sub`, with `query` (empty values left out). */
  to(sub: string, query: Record<string, string | number | undefined> = {}): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') params.set(key, String(value));
    }
    const search = params.toString();
    return `${this.base}${sub ? `/${sub}` : ''}${search ? `?${search}` : ''}`;
  }
}
