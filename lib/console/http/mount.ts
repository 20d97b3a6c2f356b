import {
  Controller,
  UseGuards,
  UseInterceptors,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { ConsoleAccessGuard } from '../security/console-access.guard';
import { ConsoleResponseInterceptor } from '../security/console-response.interceptor';

/**
 * A controller at `path` made from a console route class (a subclass per mount, so the class
 * itself stays unmounted): the user's guards, then `ConsoleAccessGuard`, then the response
 * interceptor (security headers, session cookie). `open` routes (the static assets) get none.
 */
export function mountAt<T>(
  route: Type<T>,
  path: string,
  guards: Array<Type<CanActivate> | CanActivate>,
  open = false,
): Type<T> {
  const mounted = class extends (route as Type<any>) {};
  Object.defineProperty(mounted, 'name', { value: `${route.name}Controller` });
  if (!open) {
    UseGuards(...guards, ConsoleAccessGuard)(mounted);
    UseInterceptors(ConsoleResponseInterceptor)(mounted);
  }
  Controller(path)(mounted);
  return mounted as Type<T>;
}
