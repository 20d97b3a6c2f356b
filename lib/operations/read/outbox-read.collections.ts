import { Inject, Injectable } from '@nestjs/common';
import type { mongo } from 'mongoose';
import { OutboxConnectionHost } from '../../common/outbox-connection.host';
import { OUTBOX_STORAGE_OPTIONS } from '../../common/outbox.constants';
import type { OutboxStorageOptions } from '../../common/outbox-storage.options';
import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import type { ProcessedEventDocument } from '../../documents/processed-event.document';
import type { RelayStateDoc } from '../../documents/relay-state.document';

/**
 * The library's collections on the module's connection, for read-only views (the outbox
 * console). Whoever reads through it names the index each query uses; writes go through the
 * operations services (`OutboxDeadLetters`, `OutboxConsumerDeadLetters`, `OutboxEmitter.cancel`).
 */
@Injectable()
export class OutboxReadCollections {
  constructor(
    private readonly host: OutboxConnectionHost,
    @Inject(OUTBOX_STORAGE_OPTIONS) readonly storage: OutboxStorageOptions,
  ) {}

  private collection<T extends mongo.Document>(name: string): mongo.Collection<T> {
    return this.host.connection.collection<T>(name);
  }

  get outbox(): mongo.Collection<OutboxDoc> {
    return this.collection(this.storage.collections.outbox);
  }

  get deadLetters(): mongo.Collection<OutboxDeadLetter> {
    return this.collection(this.storage.collections.deadLetters);
  }

  get consumerDeadLetters(): mongo.Collection<ConsumerDeadLetterDocument> {
    return this.collection(this.storage.collections.consumerDeadLetters);
  }

  get processedEvents(): mongo.Collection<ProcessedEventDocument> {
    return this.collection(this.storage.collections.processedEvents);
  }

  get relayState(): mongo.Collection<RelayStateDoc> {
    return this.collection(this.storage.collections.relayState);
  }
}
