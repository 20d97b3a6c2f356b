import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { CONSOLE_USER, type ConsoleRequest } from '../http/console-request';

function nameOfUser(user: unknown): string | undefined {
  if (typeof user === 'string') return user;
  if (user && typeof user === 'object') {
    const u = user as Record<string, unknown>;
    for (const key of ['id', 'name', 'username', 'sub', 'email']) {
      if (typeof u[key] === 'string' || typeof u[key] === 'number') return String(u[key]);
    }
  }
  return undefined;
}

/**
 * Runs on every console route, after the user's own guards: asks `authorize(request)` who is
 * asking (falsy: 401 before any data is read), or, with guards only, takes the name from
 * `identify` or `request.user`. The name is kept on the request for the action logs.
 */
@Injectable()
export class ConsoleAccessGuard implements CanActivate {
  constructor(@Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    let who: string | false | null | undefined;
    if (this.options.authorize) {
      who = await this.options.authorize(request);
      if (!who) throw new UnauthorizedException('Not allowed to use the outbox console.');
    } else {
      who = this.options.identify?.(request) ?? nameOfUser(request.user) ?? 'guarded user';
    }
    request[CONSOLE_USER] = String(who);
    return true;
  }
}
