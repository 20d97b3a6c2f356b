import { Injectable, Logger } from '@nestjs/common';
import type { DeadLetterFilter } from '../../operations/dead-letter.filter';
import { ConsoleSources } from '../console.sources';
import type { DeadLetterKind } from '../reads/dead-letter-pages.reader';

export type DeadLetterAction = 'requeue' | 'purge';

/** What a dry run found: the count shown before the confirmation, and the filter to confirm. */
export interface DeadLetterPreview {
  kind: DeadLetterKind;
  action: DeadLetterAction;
  /** The filter shown, with `until` frozen at the preview's time: letters added later are left out. */
  filter: DeadLetterFilter;
  count: number;
  /** Up to 100 of the ids it would act on (requeue only; a purge counts). */
  eventIds: string[];
  /** Letters a requeue would refuse (consumer letters that cannot be replayed here), with why. */
  refused: Array<{ eventId: string; error: string }>;
}

export interface DeadLetterOutcome {
  kind: DeadLetterKind;
  action: DeadLetterAction;
  filter: DeadLetterFilter;
  done: number;
  failed: Array<{ eventId: string; error: string }>;
}

/**
 * Requeue and purge of dead letters for the console, through `OutboxDeadLetters` and
 * `OutboxConsumerDeadLetters` (the CLI's services). A preview is their dry run; the confirmed
 * action runs with the previewed filter, whose `until` is the preview's time, so it never acts
 * on more than what was shown. Running it again acts only on what still matches (idempotent on
 * retry). Each action is logged with who did it.
 */
@Injectable()
export class DeadLetterActions {
  private readonly logger = new Logger('OutboxConsole');

  constructor(private readonly sources: ConsoleSources) {}

  private service(kind: DeadLetterKind) {
    return kind === 'relay' ? this.sources.deadLetters : this.sources.consumerDeadLetters;
  }

  async preview(
    kind: DeadLetterKind,
    action: DeadLetterAction,
    filter: DeadLetterFilter,
    now = new Date(),
  ): Promise<DeadLetterPreview> {
    const frozen = { ...filter, until: filter.until && filter.until < now ? filter.until : now };
    if (action === 'purge') {
      const { matched } = await this.service(kind).purge(frozen, { dryRun: true });
      return { kind, action, filter: frozen, count: matched, eventIds: [], refused: [] };
    }
    const result = await this.service(kind).requeueMany(frozen, { dryRun: true });
    return {
      kind,
      action,
      filter: frozen,
      count: result.eventIds.length,
      eventIds: result.eventIds.slice(0, 100),
      refused: result.failed.slice(0, 100),
    };
  }

  async apply(
    kind: DeadLetterKind,
    action: DeadLetterAction,
    filter: DeadLetterFilter,
    who: string,
  ): Promise<DeadLetterOutcome> {
    const what = `${kind} dead letter(s) matching ${JSON.stringify(filter)}`;
    if (action === 'purge') {
      const { deleted } = await this.service(kind).purge(filter);
      this.logger.log(`${who} purged ${deleted} ${what}`);
      return { kind, action, filter, done: deleted, failed: [] };
    }
    const result = await this.service(kind).requeueMany(filter);
    this.logger.log(
      `${who} requeued ${result.requeued} ${what}` +
        (result.failed.length ? `; ${result.failed.length} could not be` : ''),
    );
    return { kind, action, filter, done: result.requeued, failed: result.failed };
  }
}
