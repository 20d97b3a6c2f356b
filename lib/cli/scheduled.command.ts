import type { mongo } from 'mongoose';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import { DUE_RUN_ORDER } from '../documents/outbox-event.document';
import type { OutboxDoc } from '../documents/outbox-event.document';
import { cancelScheduledEvent } from '../events/schedule/cancel-scheduled-event';
import { CANCEL_PROJECTION, cancelResultOf } from '../events/schedule/cancel-result';
import type { CancelScheduledResult, CancelView } from '../events/schedule/cancel-result';
import { serverTime } from '../relay/mongo/relay-collections';
import { tenantConnection } from '../tenants/tenant.connection';
import { openCliApp } from './cli-app';
import { duration } from './duration';
import type { CliIo } from './cli-io';
import type { ScheduledCommand } from './scheduled.args';

const ROW_FIELDS = ['eventId', 'eventType', 'aggregateType', 'aggregateId', 'availableAt'] as const;
type ScheduledRow = Pick<OutboxDoc, (typeof ROW_FIELDS)[number]>;

/**
 * Pending scheduled events by due time. The filter holds the relay's partial filter (`pending`,
 * `availableAt` exists) and sorts by its key, so it reads on `outbox_relay_due_runs` when the
 * relay created it: a partial index serves a query whose filter implies its partial filter
 * (https://www.mongodb.com/docs/manual/core/index-partial/#query-coverage). No hint, so a
 * database without that index is still listed.
 */
async function listScheduled(
  outbox: mongo.Collection<OutboxDoc>,
  command: ScheduledCommand,
): Promise<ScheduledRow[]> {
  const { aggregateType, aggregateId, eventType, dueBefore } = command.filter;
  const tenant = command.tenant?.id;
  return outbox
    .find<ScheduledRow>(
      {
        status: 'pending',
        availableAt: dueBefore ? { $exists: true, $lt: dueBefore } : { $exists: true },
        ...(aggregateType === undefined ? {} : { aggregateType }),
        ...(aggregateId === undefined ? {} : { aggregateId }),
        ...(eventType === undefined ? {} : { eventType }),
        ...(tenant === undefined ? {} : { tenant }),
      },
      { projection: { _id: 0, ...Object.fromEntries(ROW_FIELDS.map((field) => [field, 1])) } },
    )
    .sort(DUE_RUN_ORDER)
    .limit(command.limit)
    .toArray();
}

/** What a cancel would find now, changing nothing (`--dry-run`). */
async function previewCancel(
  outbox: mongo.Collection<OutboxDoc>,
  eventId: string,
  now: Date,
): Promise<
  CancelScheduledResult | { outcome: 'would-cancel'; eventId: string; availableAt: Date }
> {
  const doc = await outbox.findOne<CancelView>({ eventId }, { projection: CANCEL_PROJECTION });
  if (doc?.status === 'pending' && doc.availableAt && doc.availableAt > now) {
    return { outcome: 'would-cancel', eventId, availableAt: doc.availableAt };
  }
  return cancelResultOf(eventId, doc);
}

function describeOutcome(result: { outcome: string; eventId: string } & Record<string, unknown>) {
  const at = (name: string) =>
    result[name] instanceof Date ? ` ${name} ${(result[name] as Date).toISOString()}` : '';
  const again = result.alreadyCancelled === true ? ' (already)' : '';
  return `${result.eventId}  ${result.outcome}${again}${at('availableAt')}${at('cancelledAt')}${at('publishedAt')}`;
}

/** Runs `scheduled list` or `scheduled cancel` in the CLI's app context (`openCliApp`). */
export async function runScheduledCommand(command: ScheduledCommand, io: CliIo): Promise<number> {
  const app = await openCliApp(command.uri, command.collections, command.tenant);
  try {
    const { connection } = app.get(OutboxConnectionHost);
    const { collections } = app.get<OutboxStorageOptions>(OUTBOX_STORAGE_OPTIONS);
    const outbox = tenantConnection(connection, command.tenant?.database).db!.collection<OutboxDoc>(
      collections.outbox,
    );
    return command.action === 'list'
      ? await printList(outbox, await serverTime(outbox.db), command, io)
      : await cancelEach(outbox, command, io);
  } finally {
    await app.close();
  }
}

async function printList(
  outbox: mongo.Collection<OutboxDoc>,
  now: Date,
  command: ScheduledCommand,
  io: CliIo,
): Promise<number> {
  const rows = await listScheduled(outbox, command);
  const timed = rows.map((row) => {
    const dueInMs = row.availableAt!.getTime() - now.getTime();
    return { ...row, dueInMs, overdue: dueInMs <= 0 };
  });
  if (command.json) {
    io.out(JSON.stringify({ serverTime: now, events: timed, count: timed.length }, null, 2));
    return 0;
  }
  for (const row of timed) {
    io.out(
      [
        row.availableAt!.toISOString(),
        row.eventId,
        row.eventType,
        `${row.aggregateType}/${row.aggregateId}`,
        row.overdue ? `overdue ${duration(-row.dueInMs)}` : `in ${duration(row.dueInMs)}`,
      ].join('  '),
    );
  }
  const limited = rows.length === command.limit ? ` (--limit ${command.limit})` : '';
  io.out(`${rows.length} scheduled event(s)${limited}, server time ${now.toISOString()}`);
  return 0;
}

/**
 * Each event through `cancelScheduledEvent`, one at a time and without a transaction: each cancel
 * is one conditional `findOneAndUpdate` on one document, which MongoDB applies atomically
 * (https://www.mongodb.com/docs/manual/core/write-operations-atomicity/), and the events are
 * independent of each other: one that cannot be cancelled must not undo the others.
 */
/**
 * Cancels (or previews) each event named. The cancels are written with `w: "majority"` whatever
 * the URI says, as the relay writes: with `w: 1` a failover can roll back a cancel already
 * reported as `cancelled` (https://www.mongodb.com/docs/manual/core/replica-set-rollbacks/).
 */
export async function cancelEach(
  outbox: mongo.Collection<OutboxDoc>,
  command: ScheduledCommand,
  io: CliIo,
): Promise<number> {
  const majority = outbox.db.collection<OutboxDoc>(outbox.collectionName, {
    writeConcern: { w: 'majority' },
  });
  const now = command.dryRun ? await serverTime(outbox.db) : undefined;
  const results = [];
  for (const eventId of command.eventIds) {
    // With --tenant, another tenant's event (in a shared database) is not found.
    if (command.tenant && !(await outbox.findOne({ eventId, tenant: command.tenant.id }))) {
      results.push(cancelResultOf(eventId, null));
      continue;
    }
    results.push(
      now
        ? await previewCancel(outbox, eventId, now)
        : await cancelScheduledEvent(majority, eventId),
    );
  }
  const ok = (outcome: string) => outcome === 'cancelled' || outcome === 'would-cancel';
  const refused = results.filter((result) => !ok(result.outcome)).length;
  if (command.json) io.out(JSON.stringify({ dryRun: command.dryRun, results }, null, 2));
  else {
    for (const result of results) {
      const line = `${command.dryRun ? 'dry run: ' : ''}${describeOutcome(result)}`;
      if (ok(result.outcome)) io.out(line);
      else io.err(line);
    }
    io.out(
      `${results.length - refused} of ${results.length} ${command.dryRun ? 'would be ' : ''}cancelled`,
    );
  }
  return refused > 0 ? 1 : 0;
}
