import { Get, Header, Injectable } from '@nestjs/common';
import { ConsolePageKit, HTML_TYPE } from '../http/console-page';
import { OverviewReader } from '../reads/overview.reader';
import { overviewView } from './overview.view';

/** `GET <path>`: the overview. */
@Injectable()
export class OverviewPage {
  constructor(
    private readonly kit: ConsolePageKit,
    private readonly reader: OverviewReader,
  ) {}

  @Get()
  @Header('Content-Type', HTML_TYPE)
  async overview(): Promise<string> {
    const data = await this.reader.read();
    return this.kit.render('overview', 'Overview', overviewView(data, this.kit.base), 5);
  }
}
