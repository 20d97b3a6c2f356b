import type { OutboxCollections } from '../common/outbox-storage.options';
import type { ConsumerOptions } from '../consumer/consumer.options';
import type { RelayOptions } from '../relay/relay.options';
import type { OutboxTenantsOptions } from '../tenants/tenants.options';

/**
 * Options of `OutboxModule.forRoot()` / `forRootAsync()` (what `useFactory` returns). Unknown keys
 * fail bootstrap. `isGlobal` and `connectionName` shape the module itself: they are given to
 * `forRoot`/`forRootAsync` directly (see `OutboxModuleExtras`).
 */
export interface OutboxModuleOptions {
  collections?: OutboxCollections;
  /**
   * Largest accepted payload, in bytes of its JSON encoding. Default 900 000
   * (below Kafka's default 1 MB `message.max.bytes`, leaving room for headers).
   */
  maxPayloadBytes?: number;
  /** Convert `bigint` payload values to decimal strings instead of rejecting them. Default false. */
  allowBigInt?: boolean;
  /**
   * Stamp each event with a per-aggregate `sequence` (1, 2, 3, ...) drawn in the emitting
   * transaction from one counter document per aggregate (`collections.sequences`). Transactions
   * that emit for the same aggregate then always write a common document, so MongoDB serializes
   * them and sequence order is commit order. The relay orders by it on every path (the change
   * stream and the recovery paths: drain, sweep, retries), and it is sent as the `ce_sequence`
   * header. Costs one more write per aggregate per transaction. Default false: without it, the
   * recovery paths order an aggregate's events by `_id` (see the README's guarantees).
   */
  aggregateSequence?: boolean;
  /**
   * Allow scheduled events (`availableAt` / `delayMs` on an emit, see docs/writing-events.md).
   * On: every transaction that emits reads, once, the latest pending `availableAt` of its
   * aggregates (one indexed read, on a partial index that holds only pending scheduled events),
   * so an aggregate's later events wait behind its scheduled one. Give it to every app that
   * writes events of the same aggregates. Default false: no read, and an emit with a schedule is
   * refused (`InvalidScheduleError`).
   */
  scheduledEvents?: boolean;
  /** Create the library's indexes at bootstrap. Default true. */
  createIndexes?: boolean;
  /** The relay (change stream to Kafka). `false` for an app that only writes events. */
  relay?: RelayOptions | false;
  /** Defaults for `@IdempotentHandler` consumers. */
  consumer?: ConsumerOptions;
  /**
   * An outbox in each tenant's database (see docs/tenants.md): events are written to the outbox
   * of `databaseOf(tenant)` of the tenant resolved at emit time, consumers keep their records per
   * tenant. Absent: one database, the connection's.
   */
  tenants?: OutboxTenantsOptions;
}
