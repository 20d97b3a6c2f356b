import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { describeError } from '../common/errors/describe-error';
import { CONSOLE_AGGREGATE_INDEX, OUTBOX_CONSOLE_OPTIONS } from './console.constants';
import type { ResolvedConsoleOptions } from './console.options';
import { ConsoleSources } from './console.sources';

/**
 * Creates `outbox_console_by_aggregate` (`{ aggregateType, aggregateId, sequence, _id }` on the
 * outbox) when `createIndexes` is on: the event page's "aggregate's recent events" reads it. It
 * costs one more index entry per outbox write; without it that read scans the collection.
 */
@Injectable()
export class ConsoleIndexesBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('OutboxConsole');

  constructor(
    private readonly sources: ConsoleSources,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const collections = this.sources.collections;
    if (!this.options.createIndexes || !collections.storage.createIndexes) return;
    const { key, name } = CONSOLE_AGGREGATE_INDEX;
    try {
      await collections.outbox.createIndex(key, { name });
    } catch (error) {
      this.logger.warn(`Could not create the index ${name}: ${describeError(error)}`);
    }
  }
}
