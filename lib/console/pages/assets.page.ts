import { Get, Header, Injectable } from '@nestjs/common';
import { CONSOLE_CSS, CONSOLE_JS } from '../render/console.assets';

/** The console's stylesheet and script (no data: served without `authorize`). */
@Injectable()
export class ConsoleAssets {
  @Get('assets/console.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'no-cache')
  css(): string {
    return CONSOLE_CSS;
  }

  @Get('assets/console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'no-cache')
  js(): string {
    return CONSOLE_JS;
  }
}
