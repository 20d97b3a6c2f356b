import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';

/** The sample console's one operator: `operator` with `SAMPLE_CONSOLE_PASSWORD` (default `outbox`). */
export const CONSOLE_OPERATOR = 'operator';

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * HTTP Basic authentication for the sample's console (a real app uses its own login: give the
 * console its guard). A refusal asks the browser for credentials (`WWW-Authenticate`).
 */
@Injectable()
export class SampleConsoleAuthGuard implements CanActivate {
  private readonly expected = `${CONSOLE_OPERATOR}:${process.env.SAMPLE_CONSOLE_PASSWORD ?? 'outbox'}`;

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<{
      headers: Record<string, string | undefined>;
      user?: unknown;
    }>();
    const header = request.headers.authorization ?? '';
    const given = header.startsWith('Basic ')
      ? Buffer.from(header.slice(6), 'base64').toString('utf8')
      : '';
    if (given && same(given, this.expected)) {
      request.user = { name: CONSOLE_OPERATOR };
      return true;
    }
    const response = http.getResponse<{ setHeader?: (n: string, v: string) => void }>();
    response.setHeader?.('WWW-Authenticate', 'Basic realm="outbox console"');
    throw new UnauthorizedException('Sign in to use the outbox console.');
  }
}
