import { DeadLetterFilterError } from '../operations/dead-letter.filter';
import { CliUsageError, parseCommandLine } from './cli-flags';
import { deadLettersCommand } from './dead-letters.args';

const env = { MONGODB_URI: 'mongodb://127.0.0.1:1/shop' };
const parse = (...argv: string[]) =>
  deadLettersCommand(parseCommandLine(['dead-letters', ...argv], 'dead-letters'), env);

describe('the dead-letters command line', () => {
  it.each([
    ['purge', '--aggregate-id', '', '--yes'],
    ['purge', '--kind', 'consumer', '--consumer', '', '--topic', '', '--yes'],
    ['count', '--event-type', 'OrderPlaced', '--event-type', ''],
    ['list', '--since', ''],
    ['list', '--dead-letters-collection', ''],
    ['list', '--error', '  '],
  ])('refuses an empty flag value, naming the flag: %s', (...argv) => {
    const flag = argv.find((arg, i) => arg.startsWith('--') && argv[i + 1]?.trim() === '');
    expect(() => parse(...argv)).toThrow(CliUsageError);
    expect(() => parse(...argv)).toThrow(`${flag} was given an empty value`);
  });

  it('combines a flag with the same field of --filter when they agree', () => {
    const command = parse(
      'count',
      '--filter',
      '{"aggregateId":"o-1","eventType":["A","B"]}',
      '--aggregate-id',
      'o-1',
      '--event-type',
      'B',
      '--event-type',
      'A',
      '--error',
      'timeout',
    );
    expect(command.filter).toEqual({
      aggregateId: 'o-1',
      eventType: ['A', 'B'],
      error: 'timeout',
    });
  });

  it('refuses a flag that disagrees with the same field of --filter', () => {
    const argv = ['purge', '--filter', '{"aggregateId":"o-1"}', '--aggregate-id', 'o-2'];
    expect(() => parse(...argv)).toThrow(CliUsageError);
    expect(() => parse(...argv)).toThrow(
      '--aggregate-id "o-2" disagrees with "aggregateId" in --filter ("o-1")',
    );
  });

  it('refuses a single-valued flag given twice with different values', () => {
    expect(() => parse('count', '--aggregate-id', 'o-1', '--aggregate-id', 'o-2')).toThrow(
      '--aggregate-id was given more than once with different values',
    );
    expect(parse('count', '--topic', 't', '--topic', 't', '--kind', 'consumer').filter).toEqual({
      topic: 't',
    });
  });

  it.each(['purge', 'requeue'])('%s with an empty filter needs --all', (action) => {
    expect(() => parse(action, '--yes')).toThrow(CliUsageError);
    expect(() => parse(action, '--filter', '{}', '--dry-run')).toThrow(/pass --all/);
    expect(parse(action, '--all').filter).toEqual({});
  });

  it('refuses --all together with a filter', () => {
    expect(() => parse('purge', '--all', '--aggregate-id', 'o-1')).toThrow(
      /--all cannot be combined with a filter/,
    );
    expect(() => parse('count', '--all', '--filter', '{"eventIds":[]}')).toThrow(CliUsageError);
  });

  it('checks the filter for the kind of dead letter at parse time', () => {
    expect(() => parse('count', '--consumer', 'billing')).toThrow(DeadLetterFilterError);
    expect(() => parse('count', '--filter', '{"aggregateId":""}')).toThrow(DeadLetterFilterError);
  });
});
