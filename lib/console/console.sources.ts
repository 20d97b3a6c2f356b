import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { OutboxError } from '../common/errors/outbox.error';
import { OUTBOX_RELAY_OPTIONS } from '../common/outbox.constants';
import { OutboxConsumerMetrics } from '../consumer/flow/consumer.metrics';
import { IdempotentHandlerExplorer } from '../consumer/nest/idempotent-handler.explorer';
import { OutboxEmitter } from '../events/outbox.emitter';
import { OutboxHealthIndicator } from '../health/outbox-health.indicator';
import { OutboxConsumerDeadLetters } from '../operations/outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from '../operations/outbox-dead-letters.service';
import { OutboxReadCollections } from '../operations/read/outbox-read.collections';
import { OutboxRelay } from '../relay/outbox.relay';
import { OutboxRelayMetrics } from '../relay/relay.metrics';
import type { ResolvedRelayOptions } from '../relay/relay.options';
import { TransactionRunner } from '../transaction/transaction.runner';

/**
 * The library's own services the console reads and acts through, found in the app's
 * `OutboxModule` (wherever it is imported; the console needs no `isGlobal`). Fails with a clear
 * message when the app has no `OutboxModule`.
 */
@Injectable()
export class ConsoleSources {
  constructor(private readonly moduleRef: ModuleRef) {}

  private find<T>(token: unknown): T {
    try {
      return this.moduleRef.get(token as never, { strict: false }) as T;
    } catch {
      throw new OutboxError(
        'OutboxConsoleModule found no OutboxModule in this app: import OutboxModule.forRoot(...) too.',
        'OUTBOX_CONSOLE_NO_OUTBOX',
      );
    }
  }

  get collections(): OutboxReadCollections {
    return this.find(OutboxReadCollections);
  }
  get relay(): OutboxRelay {
    return this.find(OutboxRelay);
  }
  get relayMetrics(): OutboxRelayMetrics {
    return this.find(OutboxRelayMetrics);
  }
  get relayOptions(): ResolvedRelayOptions | false {
    return this.find(OUTBOX_RELAY_OPTIONS);
  }
  get consumerMetrics(): OutboxConsumerMetrics {
    return this.find(OutboxConsumerMetrics);
  }
  get deadLetters(): OutboxDeadLetters {
    return this.find(OutboxDeadLetters);
  }
  get consumerDeadLetters(): OutboxConsumerDeadLetters {
    return this.find(OutboxConsumerDeadLetters);
  }
  get emitter(): OutboxEmitter {
    return this.find(OutboxEmitter);
  }
  get runner(): TransactionRunner {
    return this.find(TransactionRunner);
  }
  get health(): OutboxHealthIndicator {
    return this.find(OutboxHealthIndicator);
  }

  /** The consumer names `@IdempotentHandler` methods of this app apply events as. */
  consumersHere(): string[] {
    return this.find<IdempotentHandlerExplorer>(IdempotentHandlerExplorer)
      .handlers()
      .map((h) => h.settings.consumer);
  }
}
