import {
  BadRequestException,
  Body,
  Get,
  Header,
  HttpCode,
  Injectable,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import { ScheduledActions } from '../actions/scheduled.actions';
import { ConsolePageKit, HTML_TYPE } from '../http/console-page';
import { consoleUser, field, fields, type ConsoleRequest } from '../http/console-request';
import { ScheduledReader } from '../reads/scheduled.reader';
import { cancelResultsView, scheduledView } from './scheduled.view';

/** `GET <path>/scheduled`: pending scheduled events by due time; `POST .../cancel` (actions). */
@Injectable()
export class ScheduledPage {
  constructor(
    private readonly kit: ConsolePageKit,
    private readonly reader: ScheduledReader,
    private readonly actions: ScheduledActions,
  ) {}

  @Get('scheduled')
  @Header('Content-Type', HTML_TYPE)
  async list(
    @Query() query: Record<string, unknown>,
    @Req() request: ConsoleRequest,
  ): Promise<string> {
    const page = await this.reader.page(field(query, 'after'));
    const body = scheduledView(this.kit.base, page, {
      csrf: this.kit.tokenOf(request),
      actions: this.kit.options.actions,
      now: Date.now(),
    });
    return this.kit.render('scheduled', 'Scheduled events', body);
  }

  @Post('scheduled/cancel')
  @HttpCode(200)
  @Header('Content-Type', HTML_TYPE)
  async cancel(@Body() body: unknown, @Req() request: ConsoleRequest): Promise<string> {
    this.kit.checkAction(request);
    const ids = fields(body, 'eventId');
    if (ids.length === 0) throw new BadRequestException('Select scheduled events to cancel.');
    if (ids.length > this.kit.options.pageSize)
      throw new BadRequestException('At most one page of events at a time.');
    const results = await this.actions.cancel(ids, consoleUser(request));
    return this.kit.render('scheduled', 'Cancelled', cancelResultsView(this.kit.base, results));
  }
}
