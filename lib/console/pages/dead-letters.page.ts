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
import { DeadLetterFilterError } from '../../operations/dead-letter.filter';
import { DeadLetterActions, type DeadLetterAction } from '../actions/dead-letter.actions';
import { ConsolePageKit, HTML_TYPE } from '../http/console-page';
import { consoleUser, field, type ConsoleRequest } from '../http/console-request';
import { html } from '../render/html';
import { DeadLetterPagesReader } from '../reads/dead-letter-pages.reader';
import { filterFrom, kindOf } from './dead-letter.form';
import { deadLettersView, outcomeView, previewView } from './dead-letters.view';

const QUERY_FIELDS = [
  'kind',
  'eventType',
  'aggregateType',
  'aggregateId',
  'error',
  'since',
  'until',
  'consumer',
  'topic',
];

/** A filter error as 400 with its message; anything else as it is. */
async function checked<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DeadLetterFilterError) throw new BadRequestException(error.message);
    throw error;
  }
}

function actionOf(body: unknown): DeadLetterAction {
  const action = field(body, 'action');
  if (action !== 'requeue' && action !== 'purge')
    throw new BadRequestException('action must be requeue or purge');
  return action;
}

/**
 * `GET <path>/dead-letters`: relay or consumer dead letters by filter, a page at a time.
 * With `actions: true`: `POST .../preview` (a dry run: the count to confirm) and
 * `POST .../apply` (the confirmed filter), both with the session's CSRF token.
 */
@Injectable()
export class DeadLettersPage {
  constructor(
    private readonly kit: ConsolePageKit,
    private readonly reader: DeadLetterPagesReader,
    private readonly actions: DeadLetterActions,
  ) {}

  @Get('dead-letters')
  @Header('Content-Type', HTML_TYPE)
  async list(
    @Query() query: Record<string, unknown>,
    @Req() request: ConsoleRequest,
  ): Promise<string> {
    const kind = kindOf(query);
    const filter = await checked(() => filterFrom(query, kind));
    const page = await checked(() => this.reader.page(kind, filter, field(query, 'after')));
    const shown = Object.fromEntries(QUERY_FIELDS.map((name) => [name, field(query, name)]));
    const body = deadLettersView(
      {
        base: this.kit.base,
        kind,
        filter,
        query: shown,
        csrf: this.kit.tokenOf(request),
        actions: this.kit.options.actions,
      },
      page,
    );
    return this.kit.render('dead-letters', `Dead letters (${kind})`, body);
  }

  @Post('dead-letters/preview')
  @HttpCode(200)
  @Header('Content-Type', HTML_TYPE)
  async preview(
    @Body() body: unknown,
    @Query('scope') scope: string,
    @Req() request: ConsoleRequest,
  ): Promise<string> {
    this.kit.checkAction(request);
    const kind = kindOf(body);
    const action = actionOf(body);
    const filter = await checked(() => filterFrom(body, kind));
    if (scope !== 'selection') delete filter.eventIds;
    else if (!filter.eventIds?.length) {
      return this.kit.render(
        'dead-letters',
        'Nothing selected',
        html`<p class="notice">Select dead letters first.</p>
          <p><a href="${this.kit.base}/dead-letters?kind=${kind}">Back</a></p>`,
      );
    }
    const preview = await checked(() => this.actions.preview(kind, action, filter));
    return this.kit.render(
      'dead-letters',
      `Confirm ${action}`,
      previewView(this.kit.base, preview, this.kit.tokenOf(request)),
    );
  }

  @Post('dead-letters/apply')
  @HttpCode(200)
  @Header('Content-Type', HTML_TYPE)
  async apply(@Body() body: unknown, @Req() request: ConsoleRequest): Promise<string> {
    this.kit.checkAction(request);
    const kind = kindOf(body);
    const action = actionOf(body);
    const filter = await checked(() => filterFrom(body, kind));
    if (!filter.until)
      throw new BadRequestException('A confirmed action carries the until of its preview.');
    const outcome = await checked(() =>
      this.actions.apply(kind, action, filter, consoleUser(request)),
    );
    return this.kit.render(
      'dead-letters',
      action === 'requeue' ? 'Requeued' : 'Purged',
      outcomeView(this.kit.base, outcome),
    );
  }
}
