import { mongo } from 'mongoose';
import { runCli } from '../../lib/cli/run-cli';
import { describeWith, mongoUriFor, uniqueName } from '../harness';

/** Records what the CLI prints. */
function recordingIo() {
  const io = { out: [] as string[], err: [] as string[] };
  const cli = {
    out: (line: string) => io.out.push(line),
    err: (line: string) => io.err.push(line),
    ask: () => Promise.reject(new Error('the scheduled command asks nothing')),
  };
  return { io, cli };
}

const HOUR = 3_600_000;

/** An outbox document as the write side stores it; scheduled when `dueInMs` is given. */
const outboxDoc = (
  eventId: string,
  aggregateId: string,
  status: 'pending' | 'published' | 'cancelled',
  now: number,
  dueInMs?: number,
) => ({
  eventId,
  eventType: aggregateId === 'o-2' ? 'PaymentReminder' : 'OrderReminder',
  aggregateType: 'Order',
  aggregateId,
  payload: {},
  status,
  occurredAt: new Date(now),
  ...(dueInMs === undefined ? {} : { availableAt: new Date(now + dueInMs) }),
});

async function seed(uri: string, db: string): Promise<mongo.MongoClient> {
  const client = await mongo.MongoClient.connect(uri);
  const now = Date.now();
  await client
    .db(db)
    .collection('outbox')
    .insertMany([
      outboxDoc('s-3', 'o-1', 'pending', now, 3 * HOUR),
      outboxDoc('s-1', 'o-1', 'pending', now, -HOUR), // overdue: the relay has not got to it
      outboxDoc('s-2', 'o-2', 'pending', now, 2 * HOUR),
      outboxDoc('s-4', 'o-3', 'cancelled', now, 5 * HOUR),
      outboxDoc('p-1', 'o-1', 'published', now, -2 * HOUR),
      outboxDoc('i-1', 'o-1', 'pending', now), // immediate: not scheduled
    ]);
  return client;
}

function useSeededDatabase(prefix: string) {
  const db = uniqueName(prefix);
  const state = { uri: mongoUriFor(db), client: undefined as mongo.MongoClient | undefined };
  beforeAll(async () => {
    state.client = await seed(state.uri, db);
  });
  afterAll(async () => {
    await state.client?.db(db).dropDatabase();
    await state.client?.close();
  });
  const run = async (args: string[]) => {
    const { io, cli } = recordingIo();
    const code = await runCli(['scheduled', ...args, '--uri', state.uri], {}, cli);
    return { code, ...io };
  };
  const statusOf = async (eventId: string) =>
    (await state.client!.db(db).collection('outbox').findOne({ eventId }))?.status;
  return { run, statusOf };
}

describeWith(['mongodb'], 'the scheduled CLI: list, dry-run cancel, usage', () => {
  const { run, statusOf } = useSeededDatabase('sched-cli');

  it('lists pending scheduled events by due time, overdue or in how long, then a count', async () => {
    const listed = await run(['list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toHaveLength(4);
    expect(listed.out[0]).toMatch(
      / {2}s-1 {2}OrderReminder {2}Order\/o-1 {2}overdue (59m\d\ds|1h0m)$/,
    );
    expect(listed.out[1]).toMatch(/ {2}s-2 {2}PaymentReminder {2}Order\/o-2 {2}in (1h59m|2h0m)$/);
    expect(listed.out[2]).toMatch(/ {2}s-3 {2}OrderReminder {2}Order\/o-1 {2}in (2h59m|3h0m)$/);
    expect(listed.out[3]).toMatch(/^3 scheduled event\(s\), server time \d{4}-/);
  });

  it('narrows by aggregate, event type and due time, with --limit and --json', async () => {
    const byAggregate = await run(['list', '--aggregate-id', 'o-1', '--json']);
    expect(byAggregate.code).toBe(0);
    const json = JSON.parse(byAggregate.out[0]) as {
      count: number;
      events: Array<{ eventId: string; overdue: boolean; dueInMs: number }>;
    };
    expect(json.count).toBe(2);
    expect(json.events.map((e) => [e.eventId, e.overdue])).toEqual([
      ['s-1', true],
      ['s-3', false],
    ]);
    const soon = await run([
      'list',
      '--due-before',
      new Date(Date.now() + 2.5 * HOUR).toISOString(),
    ]);
    expect(soon.out.slice(0, -1).map((line) => line.split('  ')[1])).toEqual(['s-1', 's-2']);
    const byType = await run(['list', '--event-type', 'PaymentReminder']);
    expect(byType.out.at(-1)).toMatch(/^1 scheduled event\(s\)/);
    const limited = await run(['list', '--limit', '1']);
    expect(limited.out.at(-1)).toMatch(/^1 scheduled event\(s\) \(--limit 1\)/);
  });

  it('cancel --dry-run says what each cancel would find, changes nothing, exit 1 if any would fail', async () => {
    const dry = await run([
      'cancel',
      ...['s-2', 's-1', 'p-1', 'i-1', 's-4', 'nope'].flatMap((id) => ['--event-id', id]),
      '--dry-run',
    ]);
    expect(dry.code).toBe(1);
    expect(dry.out[0]).toMatch(/^dry run: s-2 {2}would-cancel availableAt /);
    // Cancelled by an earlier call: cancel is idempotent, so that counts as cancelled.
    expect(dry.out[1]).toMatch(/^dry run: s-4 {2}cancelled \(already\) availableAt /);
    expect(dry.err).toEqual([
      expect.stringMatching(/^dry run: s-1 {2}already-due availableAt /),
      'dry run: p-1  published',
      'dry run: i-1  not-scheduled',
      'dry run: nope  not-found',
    ]);
    expect(dry.out.at(-1)).toBe('2 of 6 would be cancelled');
    expect(await statusOf('s-2')).toBe('pending');
    const one = await run(['cancel', '--event-id', 's-3', '--dry-run', '--json']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.out[0])).toMatchObject({
      dryRun: true,
      results: [{ outcome: 'would-cancel', eventId: 's-3' }],
    });
  });

  it('refuses bad usage with exit code 2 and the usage text, before connecting', async () => {
    const { io, cli } = recordingIo();
    const code = await runCli(['scheduled', 'list', '--limit', 'many'], { MONGODB_URI: 'x' }, cli);
    expect(code).toBe(2);
    expect(io.err[0]).toContain('--limit must be a positive integer');
    expect(io.err[0]).toContain('Usage: nestjs-outbox scheduled <list|cancel>');
    expect((await run(['cancel'])).code).toBe(2);
  });
});

/**
 * Cancel itself: `cancelScheduledEvent` judges "not yet due" with `$$NOW` in its filter and
 * stamps `cancelledAt` with an update pipeline; PoppyDB evaluates neither, so this needs a real
 * mongod (reported skipped by name there).
 */
describeWith(['real-mongodb'], 'the scheduled CLI: cancel on the server clock', () => {
  const { run, statusOf } = useSeededDatabase('sched-cli-cancel');

  it('cancels each event, prints each typed result, exit 1 when any was not cancelled', async () => {
    const all = await run(['cancel', '--event-id', 's-2', '--event-id', 's-3']);
    expect(all.code).toBe(0);
    expect(all.out[0]).toMatch(/^s-2 {2}cancelled availableAt \S+ cancelledAt /);
    expect(all.out.at(-1)).toBe('2 of 2 cancelled');
    expect(await statusOf('s-2')).toBe('cancelled');

    const mixed = await run([
      'cancel',
      ...['s-2', 's-1', 'p-1', 'i-1', 'nope'].flatMap((id) => ['--event-id', id]),
      '--json',
    ]);
    expect(mixed.code).toBe(1);
    expect(
      (JSON.parse(mixed.out[0]) as { results: Array<{ outcome: string }> }).results.map(
        (r) => r.outcome,
      ),
    ).toEqual(['cancelled', 'already-due', 'published', 'not-scheduled', 'not-found']);
    expect(await statusOf('s-1')).toBe('pending');
  });
});
