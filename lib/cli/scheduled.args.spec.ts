import { CliUsageError, parseCommandLine } from './cli-flags';
import { scheduledCommand } from './scheduled.args';

const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/shop' };
const parse = (...argv: string[]) =>
  scheduledCommand(parseCommandLine(['scheduled', ...argv], 'scheduled'), env);
const refusal = (...argv: string[]) => {
  try {
    parse(...argv);
  } catch (error) {
    expect(error).toBeInstanceOf(CliUsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

describe('the scheduled command line', () => {
  it('parses list with its filter, limit and collection', () => {
    expect(
      parse(
        'list',
        '--aggregate-type',
        'Order',
        '--aggregate-id',
        'o-1',
        '--event-type',
        'ReminderDue',
        '--due-before',
        '2026-12-02T00:00:00Z',
        '--limit',
        '5',
        '--json',
        '--outbox-collection',
        'events',
      ),
    ).toEqual({
      action: 'list',
      uri: env.MONGODB_URI,
      filter: {
        aggregateType: 'Order',
        aggregateId: 'o-1',
        eventType: 'ReminderDue',
        dueBefore: new Date('2026-12-02T00:00:00Z'),
      },
      eventIds: [],
      limit: 5,
      dryRun: false,
      json: true,
      collections: { outbox: 'events' },
    });
    expect(parse('list')).toMatchObject({ filter: {}, limit: 100, collections: {} });
  });

  it('parses cancel with repeated event ids, in order, duplicates removed', () => {
    expect(
      parse('cancel', '--event-id', 'e-2', '--event-id', 'e-1', '--event-id', 'e-2', '--dry-run'),
    ).toMatchObject({ action: 'cancel', eventIds: ['e-2', 'e-1'], dryRun: true });
  });

  it.each([
    [['list', '--due-before', 'tomorrow'], '--due-before "tomorrow" is not a time'],
    [['list', '--limit', '0'], '--limit must be a positive integer, got "0"'],
    [['list', '--limit', '2.5'], '--limit must be a positive integer'],
    [['list', '--aggregate-id', ''], '--aggregate-id was given an empty value'],
    [['list', '--event-type', 'A', '--event-type', 'B'], '--event-type was given more than once'],
    [['list', '--event-id', 'e-1'], '--event-id is a flag of "scheduled cancel"'],
    [['list', '--dry-run'], '--dry-run is a flag of "scheduled cancel"'],
    [['cancel'], 'scheduled cancel needs --event-id'],
    [['cancel', '--event-id', ''], '--event-id was given an empty value'],
    [['cancel', '--event-id', 'e-1', '--aggregate-id', 'o-1'], '--aggregate-id is a flag of'],
    [['cancel', '--event-id', 'e-1', '--limit', '3'], '--limit is a flag of "scheduled list"'],
    [['drop'], 'unknown action "drop" (use list, cancel)'],
    [[], 'no action given'],
    [['list', 'extra'], 'unexpected argument "extra"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(refusal(...argv)).toContain(message);
  });

  it('needs a connection string', () => {
    expect(() =>
      scheduledCommand(parseCommandLine(['scheduled', 'list'], 'scheduled'), {}),
    ).toThrow('no MongoDB connection string: pass --uri or set MONGODB_URI');
  });

  it('rejects an unknown flag (parseArgs strict)', () => {
    expect(() => parse('list', '--due-after', 'x')).toThrow(/Unknown option '--due-after'/);
  });
});
