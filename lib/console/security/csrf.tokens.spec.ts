import { ForbiddenException } from '@nestjs/common';
import { resolveConsoleOptions } from '../console.options';
import { CONSOLE_USER, type ConsoleRequest } from '../http/console-request';
import { CsrfTokens } from './csrf.tokens';
import { SESSION_COOKIE } from './session-cookie';

const options = (secret: string) =>
  resolveConsoleOptions({ authorize: () => 'x', secret, actions: true }, () => Buffer.alloc(1));
const request = (cookie: string | undefined, user = 'ann'): ConsoleRequest => ({
  headers: cookie ? { cookie: `${SESSION_COOKIE}=${encodeURIComponent(cookie)}` } : {},
  [CONSOLE_USER]: user,
});

describe('CSRF tokens bound to the signed session cookie', () => {
  const csrf = new CsrfTokens(options('a-secret-of-enough-length'));
  const session = csrf.newSession();
  const id = session.slice(0, session.indexOf('.'));

  it('accept the token of the session and user', () => {
    const token = csrf.tokenFor(id, request(session));
    expect(() => csrf.verify(request(session), token)).not.toThrow();
  });

  it('refuse no token, a forged one, another user, no cookie or a cookie signed with another secret', () => {
    const token = csrf.tokenFor(id, request(session));
    expect(() => csrf.verify(request(session), undefined)).toThrow(ForbiddenException);
    expect(() => csrf.verify(request(session), 'forged')).toThrow(ForbiddenException);
    expect(() => csrf.verify(request(session, 'bob'), token)).toThrow(ForbiddenException);
    expect(() => csrf.verify(request(undefined), token)).toThrow(ForbiddenException);
    const other = new CsrfTokens(options('another-secret-of-enough-length'));
    expect(() => other.verify(request(session), token)).toThrow(ForbiddenException);
    expect(csrf.sessionOf(request(`${id}.tampered`))).toBeUndefined();
  });

  it('refuse every action when actions are off', () => {
    const token = csrf.tokenFor(id, request(session));
    expect(() => csrf.verifyAction(request(session), false, token)).toThrow(/read-only/);
  });
});
