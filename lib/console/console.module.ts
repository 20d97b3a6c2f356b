import { Module, type DynamicModule } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DeadLetterActions } from './actions/dead-letter.actions';
import { ScheduledActions } from './actions/scheduled.actions';
import { ConsoleApi } from './api/console-api.controller';
import { ConsoleIndexesBootstrap } from './console-indexes.bootstrap';
import { OUTBOX_CONSOLE_OPTIONS } from './console.constants';
import { resolveConsoleOptions, type OutboxConsoleOptions } from './console.options';
import { ConsoleSources } from './console.sources';
import { ConsoleLinks } from './http/console-links';
import { ConsolePageKit } from './http/console-page';
import { mountAt } from './http/mount';
import { MetricsSampler } from './metrics/metrics-sampler.service';
import { ConsoleAssets } from './pages/assets.page';
import { DeadLettersPage } from './pages/dead-letters.page';
import { EventPage } from './pages/event.page';
import { OverviewPage } from './pages/overview.page';
import { ScheduledPage } from './pages/scheduled.page';
import { DeadLetterPagesReader } from './reads/dead-letter-pages.reader';
import { EventReader } from './reads/event.reader';
import { OverviewReader } from './reads/overview.reader';
import { ScheduledReader } from './reads/scheduled.reader';
import { ConsoleAccessGuard } from './security/console-access.guard';
import { ConsoleResponseInterceptor } from './security/console-response.interceptor';
import { CsrfTokens } from './security/csrf.tokens';

const ROUTES = [OverviewPage, EventPage, DeadLettersPage, ScheduledPage, ConsoleApi];

/**
 * The outbox console: HTML pages and a JSON API over the library's own services, mounted at
 * `path` of your Nest HTTP app (Express or Fastify). Import it next to `OutboxModule`:
 *
 * `OutboxConsoleModule.forRoot({ path: 'outbox', authorize: (req) => userNameOrFalse(req) })`
 *
 * It refuses to start without `authorize` or `guards`, and is read-only unless `actions: true`.
 */
@Module({})
export class OutboxConsoleModule {
  static forRoot(options: OutboxConsoleOptions): DynamicModule {
    const resolved = resolveConsoleOptions(options, () => randomBytes(32));
    return {
      module: OutboxConsoleModule,
      controllers: [
        ...ROUTES.map((route) => mountAt(route as never, resolved.path, resolved.guards)),
        mountAt(ConsoleAssets, resolved.path, [], true),
      ],
      providers: [
        { provide: OUTBOX_CONSOLE_OPTIONS, useValue: resolved },
        ConsoleSources,
        ConsoleLinks,
        ConsolePageKit,
        CsrfTokens,
        ConsoleAccessGuard,
        ConsoleResponseInterceptor,
        MetricsSampler,
        ConsoleIndexesBootstrap,
        OverviewReader,
        EventReader,
        DeadLetterPagesReader,
        ScheduledReader,
        DeadLetterActions,
        ScheduledActions,
        ...resolved.guards.filter((g): g is never => typeof g === 'function'),
      ],
    };
  }
}
