import { CliUsageError, parseCommandLine } from './cli-flags';
import { runCli } from './run-cli';

const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/shop' };

/** What `nestjs-outbox <argv>` prints first on stderr, and its exit code; nothing connects. */
async function refused(...argv: string[]): Promise<{ code: number; said: string }> {
  const err: string[] = [];
  const code = await runCli(argv, env, {
    out: () => undefined,
    err: (line) => err.push(line),
    ask: () => Promise.reject(new Error('asked')),
  });
  return { code, said: err[0]?.split('\n')[0] ?? '' };
}

describe('the command line every command shares', () => {
  it.each([
    [
      ['scheduled', 'list', '--kind', 'consumer'],
      '--kind is a flag of "dead-letters", not of "scheduled"',
    ],
    [
      ['scheduled', 'cancel', '--event-id', 'e-1', '--yes'],
      '--yes is a flag of "dead-letters", not of "scheduled"',
    ],
    [
      ['dead-letters', 'count', '--due-before', '2026-12-01T00:00:00Z'],
      '--due-before is a flag of "scheduled list", not of "dead-letters"',
    ],
  ])('refuses a flag of another command, naming where it belongs: %j', async (argv, message) => {
    expect(await refused(...argv)).toEqual({ code: 2, said: `nestjs-outbox: ${message}` });
  });

  it('refuses the dead-letters filter (JSON or flags) on scheduled, which filters by its own flags', async () => {
    expect(await refused('scheduled', 'list', '--filter', '{"aggregateId":"o-1"}')).toEqual({
      code: 2,
      said: 'nestjs-outbox: --filter is a flag of "dead-letters", not of "scheduled"',
    });
    expect(
      (await refused('scheduled', 'list', '--aggregate-id', 'o-1', '--error', 'timeout')).said,
    ).toContain('--error is a flag of "dead-letters"');
  });

  it('takes the flags before the command too, for every command', async () => {
    expect(parseCommandLine(['--uri', 'mongodb://h/db', 'scheduled', 'list']).command).toBe(
      'scheduled',
    );
    // Routed to scheduled (not refused as an unknown dead-letters command), which checks --limit.
    expect(await refused('--json', 'scheduled', 'list', '--limit', '0')).toEqual({
      code: 2,
      said: 'nestjs-outbox: --limit must be a positive integer, got "0"',
    });
    expect(parseCommandLine(['--json', 'dead-letters', 'count'])).toMatchObject({
      command: 'dead-letters',
      action: 'count',
    });
  });

  it('names an unknown action before a misplaced flag', async () => {
    expect((await refused('scheduled', 'drop', '--kind', 'consumer')).said).toBe(
      'nestjs-outbox: unknown action "drop" (use list, cancel)',
    );
    expect((await refused('nothing', 'list')).said).toBe(
      'nestjs-outbox: unknown command "nothing"',
    );
    expect((await refused('--json')).said).toBe('nestjs-outbox: no command given');
  });

  it.each([
    [['dead-letters', 'list', '--uri'], "Option '--uri <value>' argument missing"],
    [['dead-letters', 'list', '--all=1'], "Option '--all' does not take an argument"],
    [['scheduled', 'list', '--due-after', 'x'], "Unknown option '--due-after'"],
  ])('refuses what Node cannot parse with a typed usage error: %j', async (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(CliUsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
    expect((await refused(...argv)).code).toBe(2);
  });

  it('reads a command known to the caller only', () => {
    expect(() => parseCommandLine(['scheduled', 'list'], 'dead-letters')).toThrow(
      'unknown command "scheduled"',
    );
  });
});
