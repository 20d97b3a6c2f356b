import { Get, Header, Injectable, Query } from '@nestjs/common';
import { ConsolePageKit, HTML_TYPE } from '../http/console-page';
import { field } from '../http/console-request';
import { html } from '../render/html';
import { EventReader } from '../reads/event.reader';
import { aggregateTable, eventView, lookupForm } from './event.view';

/** `GET <path>/events?eventId=...` or `?aggregateType=...&aggregateId=...`: an event's journey. */
@Injectable()
export class EventPage {
  constructor(
    private readonly kit: ConsolePageKit,
    private readonly reader: EventReader,
  ) {}

  @Get('events')
  @Header('Content-Type', HTML_TYPE)
  async event(@Query() query: Record<string, unknown>): Promise<string> {
    const q = {
      eventId: field(query, 'eventId'),
      aggregateType: field(query, 'aggregateType'),
      aggregateId: field(query, 'aggregateId'),
    };
    const form = lookupForm(this.kit.base, q);
    if (q.eventId) {
      const journey = await this.reader.read(q.eventId);
      const body = html`${form}${eventView(this.kit.base, journey, this.kit.options.redact)}`;
      return this.kit.render('events', `Event ${q.eventId}`, body);
    }
    if (q.aggregateType && q.aggregateId) {
      const events = await this.reader.aggregate(q.aggregateType, q.aggregateId);
      const body = html`${form}
        <h2>Recent events of ${q.aggregateType} ${q.aggregateId}</h2>
        ${aggregateTable(this.kit.base, events)}`;
      return this.kit.render('events', `Aggregate ${q.aggregateType} ${q.aggregateId}`, body);
    }
    return this.kit.render(
      'events',
      'Event',
      html`${form}
        <p>Look up an event by its id, or an aggregate by its type and id.</p>`,
    );
  }
}
