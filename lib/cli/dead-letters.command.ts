import type { ConsumerDeadLetterDocument } from '../documents/consumer-dead-letter.document';
import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';
import { OutboxConsumerDeadLetters } from '../operations/outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from '../operations/outbox-dead-letters.service';
import type { OutboxDeadLetter } from '../documents/dead-letter.document';
import type { DeadLettersCommand } from './dead-letters.args';
import { openCliApp } from './cli-app';
import type { CliIo } from './cli-io';

function describeFilter(command: DeadLettersCommand): string {
  const text = JSON.stringify(command.filter);
  return text === '{}' ? 'every dead letter' : `filter ${text}`;
}

const short = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text);

function row(letter: OutboxDeadLetter): string {
  return [
    new Date(letter.deadLetteredAt).toISOString(),
    letter.eventId,
    letter.eventType,
    `${letter.aggregateType}/${letter.aggregateId}`,
    letter.reason,
    short(letter.lastError),
  ].join('  ');
}

function consumerRow(letter: ConsumerDeadLetterDocument): string {
  const type = letter.headers?.find((h) => h.key === KAFKA_HEADERS.type)?.value ?? '-';
  return [
    letter.deadLetteredAt ? new Date(letter.deadLetteredAt).toISOString() : '-',
    letter.consumer,
    letter.eventId ?? '(no event id)',
    type,
    `${letter.topic}[${letter.partition}]@${letter.offset} key=${letter.key ?? ''}`,
    letter.reason ?? '-',
    short(letter.lastError ?? ''),
  ].join('  ');
}

/** What the actions run on: the relay's and the consumers' dead-letter services. */
export interface DeadLetterServices {
  relay: Pick<OutboxDeadLetters, 'list' | 'count' | 'requeueMany' | 'purge'>;
  consumer: Pick<OutboxConsumerDeadLetters, 'list' | 'count' | 'purge'>;
}

/** Runs one `dead-letters` action in the CLI's app context (`openCliApp`); resolves the exit code. */
export async function runDeadLettersCommand(
  command: DeadLettersCommand,
  io: CliIo,
): Promise<number> {
  const app = await openCliApp(command.uri, command.collections, command.tenant);
  try {
    const relay = app.get(OutboxDeadLetters);
    const consumer = app.get(OutboxConsumerDeadLetters);
    const tenant = command.tenant?.id;
    const services = tenant
      ? { relay: relay.forTenant(tenant), consumer: consumer.forTenant(tenant) }
      : { relay, consumer };
    return await runDeadLettersAction(command, services, io);
  } finally {
    await app.close();
  }
}

/**
 * The action of `command` on `services`, with `command.filter` as parsed: the filter every call
 * gets is the one a dry run and the purge question print.
 */
export async function runDeadLettersAction(
  command: DeadLettersCommand,
  services: DeadLetterServices,
  io: CliIo,
): Promise<number> {
  const consumers = command.kind === 'consumer';
  const deadLetters = consumers ? services.consumer : services.relay;
  const { filter } = command;
  switch (command.action) {
    case 'list': {
      const letters = await deadLetters.list(filter, command.limit);
      if (command.json) io.out(JSON.stringify(letters, null, 2));
      else {
        for (const letter of letters) {
          io.out(
            consumers
              ? consumerRow(letter as ConsumerDeadLetterDocument)
              : row(letter as OutboxDeadLetter),
          );
        }
        io.out(
          `${letters.length} dead letter(s)${letters.length === command.limit ? ` (--limit ${command.limit})` : ''}`,
        );
      }
      return 0;
    }
    case 'count': {
      const count = await deadLetters.count(filter);
      io.out(command.json ? JSON.stringify({ count }) : String(count));
      return 0;
    }
    case 'requeue': {
      const result = await services.relay.requeueMany(filter, {
        batchSize: command.batchSize,
        dryRun: command.dryRun,
      });
      if (command.json) io.out(JSON.stringify({ ...result, filter }, null, 2));
      else {
        const ids = result.eventIds.join(' ');
        io.out(
          result.dryRun
            ? `dry run: would requeue ${result.eventIds.length} event(s) (${describeFilter(command)}): ${ids}`
            : `requeued ${result.requeued} event(s) in ${result.batches} batch(es): ${ids}`,
        );
        for (const failure of result.failed)
          io.err(`not requeued ${failure.eventId}: ${failure.error}`);
      }
      return result.failed.length > 0 ? 1 : 0;
    }
    case 'purge': {
      if (!command.dryRun && !command.yes) {
        const matched = await deadLetters.count(filter);
        if (matched === 0) {
          io.out('nothing to purge: no dead letter matches');
          return 0;
        }
        const answer = await io.ask(
          `Delete ${matched} ${consumers ? 'consumer ' : ''}dead letter(s) (${describeFilter(command)}) for good? Type "yes" to go on: `,
        );
        if (answer.trim().toLowerCase() !== 'yes') {
          io.err('purge cancelled: nothing deleted');
          return 1;
        }
      }
      const result = await deadLetters.purge(filter, { dryRun: command.dryRun });
      if (command.json) io.out(JSON.stringify({ ...result, filter }));
      else
        io.out(
          result.dryRun
            ? `dry run: would delete ${result.matched} dead letter(s) (${describeFilter(command)})`
            : `deleted ${result.deleted} dead letter(s)`,
        );
      return 0;
    }
  }
}
