import fc from 'fast-check';
import { DeadLetterFilterError } from '../operations/dead-letter.filter';
import type { DeadLetterFilter } from '../operations/dead-letter.filter';
import { CliUsageError, parseCommandLine } from './cli-flags';
import { deadLettersCommand } from './dead-letters.args';
import { runDeadLettersAction } from './dead-letters.command';
import type { DeadLetterServices } from './dead-letters.command';

/** The filter flags, the field each sets, and values to draw from (empty and blank included). */
const TEXTS = ['', ' ', 'a', 'b'];
const TIMES = ['', ' ', 'nope', '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z'];
const FLAGS: Record<string, { field: keyof DeadLetterFilter; values: string[] }> = {
  'event-type': { field: 'eventType', values: TEXTS },
  'aggregate-type': { field: 'aggregateType', values: TEXTS },
  'aggregate-id': { field: 'aggregateId', values: TEXTS },
  error: { field: 'error', values: TEXTS },
  since: { field: 'since', values: TIMES },
  until: { field: 'until', values: TIMES },
  'event-id': { field: 'eventIds', values: TEXTS },
  consumer: { field: 'consumer', values: TEXTS },
  topic: { field: 'topic', values: TEXTS },
};
const LIST_FLAGS = new Set(['event-type', 'event-id']);

/** A flag and a value; mostly a usable one, so that many command lines run. */
const flag = fc.constantFrom(...Object.keys(FLAGS)).chain((name) => {
  const [empty, blank, ...usable] = FLAGS[name].values;
  return fc
    .oneof(
      { arbitrary: fc.constantFrom(...usable), weight: 6 },
      { arbitrary: fc.constantFrom(empty, blank), weight: 1 },
    )
    .map((value) => [name, value] as const);
});

/** A `--filter` object over the same fields, with the same values, lists and wrong types too. */
const filterJson = fc.dictionary(
  fc.constantFrom(...Object.values(FLAGS).map(({ field }) => field)),
  fc.oneof(
    { arbitrary: fc.constantFrom(...TEXTS, ...TIMES.slice(3)), weight: 4 },
    { arbitrary: fc.array(fc.constantFrom(...TEXTS), { maxLength: 3 }), weight: 2 },
    { arbitrary: fc.constantFrom(null, 5), weight: 1 },
  ),
  { maxKeys: 3 },
);

const commandLine = fc.record({
  action: fc.constantFrom('list', 'count', 'requeue', 'purge'),
  kind: fc.constantFrom(undefined, 'relay', 'consumer'),
  flags: fc.array(flag, { maxLength: 5 }),
  filter: fc.option(filterJson, { nil: undefined, freq: 2 }),
  switches: fc.subarray(['--all', '--dry-run', '--yes', '--json']),
});
type CommandLine = typeof commandLine extends fc.Arbitrary<infer T> ? T : never;

function argv(line: CommandLine): string[] {
  return [
    'dead-letters',
    line.action,
    ...(line.kind ? ['--kind', line.kind] : []),
    ...line.flags.flatMap(([name, value]) => [`--${name}`, value]),
    ...(line.filter ? ['--filter', JSON.stringify(line.filter)] : []),
    ...line.switches,
  ];
}

/** Services that record the filter each call gets. */
function recordingServices(used: DeadLetterFilter[]): DeadLetterServices {
  const purge = async (filter: DeadLetterFilter = {}, options: { dryRun?: boolean } = {}) => {
    used.push(filter);
    return { dryRun: options.dryRun ?? false, matched: 2, deleted: options.dryRun ? 0 : 2 };
  };
  const count = async (filter: DeadLetterFilter = {}) => {
    used.push(filter);
    return 2;
  };
  const list = async (filter: DeadLetterFilter = {}) => {
    used.push(filter);
    return [];
  };
  return {
    relay: {
      list,
      count,
      purge,
      requeueMany: async (filter = {}, options = {}) => {
        used.push(filter);
        const dryRun = options.dryRun ?? false;
        return { dryRun, requeued: dryRun ? 0 : 1, eventIds: ['e-1'], failed: [], batches: 1 };
      },
    },
    consumer: { list, count, purge },
  };
}

/** The values `field` may take under `filter`: a set for the "any of" fields. */
function valuesOf(filter: DeadLetterFilter, field: keyof DeadLetterFilter): string[] {
  const value = filter[field];
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => (item instanceof Date ? item.toISOString() : String(item)));
}

/** What a given flag value allows, in the terms of `valuesOf`. */
function allowed(name: string, value: string): string {
  return name === 'since' || name === 'until' ? new Date(value).toISOString() : value;
}

describe('dead-letters command lines (property)', () => {
  it('never act on more than the filter a dry run prints, and that filter holds every flag', async () => {
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(commandLine, async (line) => {
        let command;
        try {
          command = deadLettersCommand(parseCommandLine(argv(line), 'dead-letters'), {
            MONGODB_URI: 'mongodb://h/db',
          });
        } catch (error) {
          // Refused: with a typed error that says why.
          expect(error instanceof CliUsageError || error instanceof DeadLetterFilterError).toBe(
            true,
          );
          return;
        }
        ran++;
        const used: DeadLetterFilter[] = [];
        const out: string[] = [];
        const io = { out: (l: string) => out.push(l), err: () => {}, ask: async () => 'yes' };
        await runDeadLettersAction(command, recordingServices(used), io);

        // Every call the action made used the filter the command line parsed to...
        expect(used.length).toBeGreaterThan(0);
        for (const filter of used) expect(filter).toEqual(command.filter);
        const filter = command.filter;
        // ... which is what a dry run prints.
        if (command.dryRun && (command.action === 'requeue' || command.action === 'purge')) {
          const printed = command.json
            ? JSON.stringify((JSON.parse(out.join('\n')) as { filter: unknown }).filter)
            : /\((filter (.*)|every dead letter)\)/.exec(out[0])?.[2];
          expect(printed ?? '{}').toBe(JSON.stringify(filter));
        }
        // Each flag narrows: its field takes only the values the flag allows.
        for (const [name, value] of line.flags) {
          const given = line.flags.filter(([other]) => other === name).map(([, v]) => v);
          const field = FLAGS[name].field;
          const permitted = LIST_FLAGS.has(name)
            ? given.map((v) => allowed(name, v))
            : [allowed(name, value)];
          expect(filter[field]).toBeDefined();
          for (const taken of valuesOf(filter, field)) expect(permitted).toContain(taken);
        }
        // Each --filter field is kept as given.
        for (const [field, value] of Object.entries(line.filter ?? {})) {
          const isTime = (field === 'since' || field === 'until') && typeof value === 'string';
          const asGiven = isTime ? new Date(value) : value;
          expect(filter[field as keyof DeadLetterFilter]).toEqual(asGiven);
        }
        // Acting on every dead letter is only ever asked for with --all.
        if (Object.keys(filter).length === 0 && ['requeue', 'purge'].includes(command.action)) {
          expect(line.switches).toContain('--all');
        }
      }),
      { numRuns: 2000, seed: 18 },
    );
    // Not a property of refusals only: a good share of the command lines run.
    expect(ran).toBeGreaterThan(200);
  });
});
