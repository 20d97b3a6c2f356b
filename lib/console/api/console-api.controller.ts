import { BadRequestException, Get, Injectable, Param, Query } from '@nestjs/common';
import { DeadLetterFilterError } from '../../operations/dead-letter.filter';
import { ConsoleSources } from '../console.sources';
import { field } from '../http/console-request';
import { filterFrom, kindOf } from '../pages/dead-letter.form';
import { redactPayload, redactValueText } from '../render/redact';
import { DeadLetterPagesReader } from '../reads/dead-letter-pages.reader';
import { EventReader } from '../reads/event.reader';
import { OverviewReader } from '../reads/overview.reader';
import { ScheduledReader } from '../reads/scheduled.reader';
import { ConsolePageKit } from '../http/console-page';

/**
 * `GET <path>/api/...`: the pages' data as JSON (same reads, same redaction): `overview`,
 * `events/:eventId`, `dead-letters?kind=&...filter&after=`, `scheduled?after=`, `health`
 * (`OutboxHealthIndicator.health()`).
 */
@Injectable()
export class ConsoleApi {
  constructor(
    private readonly kit: ConsolePageKit,
    private readonly sources: ConsoleSources,
    private readonly overview: OverviewReader,
    private readonly events: EventReader,
    private readonly deadLetters: DeadLetterPagesReader,
    private readonly scheduled: ScheduledReader,
  ) {}

  @Get('api/overview')
  overviewData() {
    return this.overview.read();
  }

  @Get('api/events/:eventId')
  async event(@Param('eventId') eventId: string) {
    const j = await this.events.read(eventId);
    const redact = this.kit.options.redact;
    return {
      ...j,
      event: j.event && { ...j.event, payload: redactPayload(j.event.payload, redact) },
      relayDeadLetter: j.relayDeadLetter && {
        ...j.relayDeadLetter,
        payload: redactPayload(j.relayDeadLetter.payload, redact),
      },
      consumerLetters: j.consumerLetters.map((l) => ({
        ...l,
        value: redactValueText(l.value, redact),
      })),
    };
  }

  @Get('api/dead-letters')
  async deadLetterPage(@Query() query: Record<string, unknown>) {
    const kind = kindOf(query);
    const redact = this.kit.options.redact;
    try {
      const page = await this.deadLetters.page(
        kind,
        filterFrom(query, kind),
        field(query, 'after'),
      );
      return {
        kind,
        next: page.next,
        rows: page.rows.map((r) =>
          'payload' in r
            ? { ...r, payload: redactPayload(r.payload, redact) }
            : { ...r, value: redactValueText(r.value, redact) },
        ),
      };
    } catch (error) {
      if (error instanceof DeadLetterFilterError) throw new BadRequestException(error.message);
      throw error;
    }
  }

  @Get('api/scheduled')
  scheduledPage(@Query('after') after?: string) {
    return this.scheduled.page(after);
  }

  @Get('api/health')
  health() {
    return this.sources.health.health();
  }
}
