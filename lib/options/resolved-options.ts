import type { ResolvedConsumerOptions } from '../consumer/consumer.options';
import type { ResolvedRelayOptions } from '../relay/relay.options';
import type { OutboxCollections } from './outbox-options.interface';

/** Options after defaults were merged and validation passed; injected as `OUTBOX_RESOLVED_OPTIONS`. */
export interface ResolvedOutboxOptions {
  connectionName?: string;
  collections: Required<OutboxCollections>;
  maxPayloadBytes: number;
  allowBigInt: boolean;
  aggregateSequence: boolean;
  createIndexes: boolean;
  relay: ResolvedRelayOptions | false;
  consumer: ResolvedConsumerOptions;
}
