import { Injectable, Logger } from '@nestjs/common';
import type { CancelScheduledResult } from '../../events/schedule/cancel-result';
import { ConsoleSources } from '../console.sources';

/**
 * Cancel of scheduled events for the console: each event in a transaction of its own through
 * `OutboxEmitter.cancel`, so the page shows the API's typed results (`cancelled`, with
 * `alreadyCancelled` on a retry; `already-due`, `published`, `not-scheduled`, `not-found`).
 * Logged with who did it.
 */
@Injectable()
export class ScheduledActions {
  private readonly logger = new Logger('OutboxConsole');

  constructor(private readonly sources: ConsoleSources) {}

  async cancel(eventIds: readonly string[], who: string): Promise<CancelScheduledResult[]> {
    const results: CancelScheduledResult[] = [];
    for (const eventId of eventIds) {
      results.push(await this.sources.runner.run(() => this.sources.emitter.cancel(eventId)));
    }
    const outcomes = results.map((r) => `${r.eventId}: ${r.outcome}`).join(', ');
    this.logger.log(`${who} cancelled scheduled event(s): ${outcomes}`);
    return results;
  }
}
