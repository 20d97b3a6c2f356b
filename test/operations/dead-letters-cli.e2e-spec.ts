import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mongo } from 'mongoose';
import { runCli } from '../../lib/cli/run-cli';
import { describeWith, mongoUriFor, testServers, uniqueName } from '../harness';

/** Records what the CLI prints and answers its question. */
function recordingIo(answer = '') {
  const io = {
    out: [] as string[],
    err: [] as string[],
    asked: [] as string[],
  };
  return {
    io,
    cli: {
      out: (line: string) => io.out.push(line),
      err: (line: string) => io.err.push(line),
      ask: async (question: string) => {
        io.asked.push(question);
        return answer;
      },
    },
  };
}

const letter = (eventId: string, aggregateId: string, eventType: string, lastError: string) => ({
  outboxId: eventId,
  eventId,
  eventType,
  aggregateType: 'Order',
  aggregateId,
  payload: {},
  occurredAt: new Date('2026-11-01T10:00:00Z'),
  reason: 'rejected',
  attempts: 1,
  lastError,
  errors: [],
  deadLetteredAt: new Date('2026-11-20T10:00:00Z'),
});

describeWith(['mongodb'], 'the dead-letters CLI', () => {
  const db = uniqueName('dl-cli');
  let uri: string;
  let client: mongo.MongoClient;
  const run = (args: string[], answer?: string) => {
    const { io, cli } = recordingIo(answer);
    return runCli(['dead-letters', ...args, '--uri', uri], {}, cli).then((code) => ({
      code,
      ...io,
    }));
  };

  beforeAll(async () => {
    const url = new URL(mongoUriFor(db));
    // PoppyDB binds a transaction to one connection (see the test harness).
    if (testServers().mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
    uri = url.toString();
    client = await mongo.MongoClient.connect(uri);
    await client
      .db(db)
      .collection('outbox_dead_letters')
      .insertMany([
        letter('e-1', 'o-1', 'OrderPlaced', 'MESSAGE_TOO_LARGE'),
        letter('e-2', 'o-2', 'OrderPlaced', 'MESSAGE_TOO_LARGE'),
        letter('e-3', 'o-3', 'OrderCancelled', 'timeout'),
      ]);
  });
  afterAll(async () => {
    await client.db(db).dropDatabase();
    await client.close();
  });

  it('lists and counts by filter, as text and as JSON', async () => {
    const listed = await run(['list', '--event-type', 'OrderPlaced']);
    expect(listed.code).toBe(0);
    expect(listed.out).toHaveLength(3);
    expect(listed.out[0]).toContain('e-1  OrderPlaced  Order/o-1  rejected  MESSAGE_TOO_LARGE');
    expect(listed.out[2]).toBe('2 dead letter(s)');

    const counted = await run(['count', '--filter', '{"error":"timeout"}', '--json']);
    expect(counted).toMatchObject({ code: 0, out: ['{"count":1}'] });
  });

  it('requeue --dry-run says what it would requeue and changes nothing', async () => {
    const dry = await run(['requeue', '--error', 'too_large', '--dry-run']);
    expect(dry).toMatchObject({
      code: 0,
      out: ['dry run: would requeue 2 event(s) (filter {"error":"too_large"}): e-1 e-2'],
    });
    expect(await client.db(db).collection('outbox_dead_letters').countDocuments()).toBe(3);
  });

  it('requeues by filter, with the same event ids', async () => {
    const done = await run(['requeue', '--aggregate-id', 'o-2', '--json']);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out[0])).toMatchObject({ requeued: 1, eventIds: ['e-2'] });
    const outbox = await client.db(db).collection('outbox').find().toArray();
    expect(outbox.map((doc) => [doc.eventId, doc.status])).toEqual([['e-2', 'pending']]);
  });

  it('refuses an empty flag value, and a purge without a filter or --all, deleting nothing', async () => {
    // `--aggregate-id "$ID"` with ID unset: once, this purged every dead letter.
    const unset = await run(['purge', '--aggregate-id', '', '--yes']);
    expect(unset.code).toBe(2);
    expect(unset.err[0]).toContain('--aggregate-id was given an empty value');
    const consumers = await run([
      'purge',
      '--kind',
      'consumer',
      '--consumer',
      '',
      '--topic',
      '',
      '--yes',
    ]);
    expect(consumers.code).toBe(2);
    const unscoped = await run(['purge', '--yes']);
    expect(unscoped.code).toBe(2);
    expect(unscoped.err[0]).toContain('pass --all');
    expect(await client.db(db).collection('outbox_dead_letters').countDocuments()).toBe(2);
  });

  it('purge asks first, and deletes only on "yes" (or with --yes)', async () => {
    const cancelled = await run(['purge', '--event-type', 'OrderCancelled'], 'no');
    expect(cancelled.code).toBe(1);
    expect(cancelled.asked[0]).toContain(
      'Delete 1 dead letter(s) (filter {"eventType":"OrderCancelled"})',
    );
    expect(cancelled.err).toEqual(['purge cancelled: nothing deleted']);

    const dry = await run(['purge', '--all', '--dry-run']);
    expect(dry).toMatchObject({
      code: 0,
      asked: [],
      out: ['dry run: would delete 2 dead letter(s) (every dead letter)'],
    });

    const confirmed = await run(['purge', '--event-type', 'OrderCancelled'], 'yes');
    expect(confirmed).toMatchObject({ code: 0, out: ['deleted 1 dead letter(s)'] });

    const forced = await run(['purge', '--all', '--yes']);
    expect(forced).toMatchObject({ code: 0, asked: [], out: ['deleted 1 dead letter(s)'] });
  });

  it('refuses bad usage with exit code 2 and the usage text', async () => {
    const { io, cli } = recordingIo();
    expect(await runCli(['dead-letters', 'drop', '--uri', uri], {}, cli)).toBe(2);
    expect(io.err[0]).toContain('unknown action "drop"');
    const badFilter = await run(['count', '--filter', '{"status":"dead"}']);
    expect(badFilter.code).toBe(2);
    expect(badFilter.err[0]).toContain('"status" is not a field of relay dead letters');
  });

  it('never prints the credentials of the connection string', async () => {
    const { io, cli } = recordingIo();
    // Built at run time with a random password: no credentials stand in the source.
    const password = randomUUID();
    const url = new URL('mongodb://127.0.0.1:1/shop?serverSelectionTimeoutMS=300');
    url.username = 'admin';
    url.password = password;
    const secretUri = url.toString();
    const code = await runCli(['dead-letters', 'count', '--uri', secretUri], {}, cli);
    expect(code).toBe(1);
    const printed = [...io.out, ...io.err].join('\n');
    expect(printed).toContain('nestjs-outbox:');
    expect(printed).not.toContain(password);
  });

  it('runs as the package binary', () => {
    const main = join(__dirname, '../../lib/cli/main.ts');
    const result = spawnSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', main, 'dead-letters', 'count', '--json'],
      { env: { ...process.env, MONGODB_URI: uri }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ count: 0 });
  });

  it('works on consumer dead letters with --kind consumer (requeue belongs to the consumer app)', async () => {
    const letter = (eventId: string, consumer: string, type: string) => ({
      consumer,
      eventId,
      status: 'dead',
      reason: 'max-failures',
      attempts: 5,
      lastError: 'Error: ledger down',
      errors: [],
      deadLetteredAt: new Date('2026-11-20T10:00:00Z'),
      topic: 'shop.Order',
      partition: 0,
      offset: '7',
      key: 'o-9',
      headers: [{ key: 'ce_type', value: type }],
      value: '{}',
    });
    await client
      .db(db)
      .collection('outbox_consumer_dead_letters')
      .insertMany([
        letter('k-1', 'billing', 'OrderPlaced'),
        letter('k-2', 'billing', 'OrderCancelled'),
        letter('k-3', 'shipping', 'OrderPlaced'),
      ]);
    const listed = await run(['list', '--kind', 'consumer', '--consumer', 'billing']);
    expect(listed.code).toBe(0);
    expect(listed.out[0]).toContain(
      'billing  k-1  OrderPlaced  shop.Order[0]@7 key=o-9  max-failures',
    );
    expect(listed.out.at(-1)).toBe('2 dead letter(s)');
    expect(await run(['count', '--kind', 'consumer', '--event-type', 'OrderPlaced'])).toMatchObject(
      {
        code: 0,
        out: ['2'],
      },
    );
    const requeue = await run(['requeue', '--kind', 'consumer']);
    expect(requeue.code).toBe(2);
    expect(requeue.err[0]).toContain('OutboxConsumerDeadLetters.requeueMany()');
    expect(
      await run(['purge', '--kind', 'consumer', '--consumer', 'shipping', '--yes']),
    ).toMatchObject({
      code: 0,
      out: ['deleted 1 dead letter(s)'],
    });
  });
});
