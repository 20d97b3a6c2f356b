import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import {
  isOptionObject,
  OptionChecker,
  showOption,
  type OptionKeys,
} from '../common/options/option.checker';
import { resolveCollections } from '../common/outbox-storage.options';
import { resolveConsumerOptions } from '../consumer/consumer.options';
import { resolveRelayOptions } from '../relay/relay.options';
import { resolveTenantsOptions } from '../tenants/tenants.options.validator';
import type { OutboxModuleOptions } from './outbox-options.interface';
import type { ResolvedOutboxOptions } from './resolved-options';

/** Defaults of the top-level options (relay and consumer defaults live in their own folders). */
const OUTBOX_DEFAULTS = Object.freeze({
  /** Below Kafka's default 1 MB `message.max.bytes`, leaving room for key and headers. */
  maxPayloadBytes: 900_000,
  allowBigInt: false,
  aggregateSequence: false,
  scheduledEvents: false,
  createIndexes: true,
});

/** Largest accepted `maxPayloadBytes`: a BSON document is at most 16 MiB, envelope included. */
const MAX_PAYLOAD_BYTES_LIMIT = 15 * 1024 * 1024;

const TOP_LEVEL_KEYS = {
  collections: true,
  maxPayloadBytes: true,
  allowBigInt: true,
  aggregateSequence: true,
  scheduledEvents: true,
  createIndexes: true,
  relay: true,
  consumer: true,
  tenants: true,
} as const satisfies OptionKeys<OutboxModuleOptions>;

/**
 * Merges defaults into the options given to `OutboxModule.forRoot()` and validates them (unknown
 * keys at any level, types, ranges, MongoDB collection names), then resolves the relay and consumer
 * sections. Throws `OutboxOptionsError` naming the option and the fix; `OutboxModule` calls it in
 * a provider factory, so a bad option fails the application's bootstrap.
 */
export function resolveOutboxOptions(
  raw: OutboxModuleOptions | undefined,
  connectionName?: string,
): ResolvedOutboxOptions {
  const check = new OptionChecker('', (option, problem, fix) => {
    throw new OutboxOptionsError(option || '(options)', problem, fix);
  });
  const given = raw ?? {};
  if (isOptionObject(given) && Object.hasOwn(given, 'connectionName')) {
    check.fail(
      'connectionName',
      "it names the module's connection, and the module's injection tokens depend on it, so it cannot come from the forRootAsync useFactory",
      "Give it to OutboxModule.forRootAsync({ connectionName: '...', useFactory }) itself, next to useFactory, as with MongooseModule.forRootAsync.",
    );
  }
  const options = check.object<OutboxModuleOptions>(
    '',
    given,
    TOP_LEVEL_KEYS,
    'Pass an object to OutboxModule.forRoot({...}) or return one from the forRootAsync useFactory.',
  );
  check.text(
    'connectionName',
    connectionName,
    undefined,
    'Use the connectionName you gave MongooseModule.forRoot(uri, { connectionName }), or omit it for the default connection.',
  );
  const collections = resolveCollections(check, options.collections);
  const maxPayloadBytes = check.int(
    'maxPayloadBytes',
    options.maxPayloadBytes,
    OUTBOX_DEFAULTS.maxPayloadBytes,
    { min: 1, max: MAX_PAYLOAD_BYTES_LIMIT, unit: 'bytes' },
    `Omit it for the default (${OUTBOX_DEFAULTS.maxPayloadBytes}, below Kafka's default message.max.bytes), or give a byte count the broker accepts.`,
  );
  const [allowBigInt, aggregateSequence, scheduledEvents, createIndexes] = (
    ['allowBigInt', 'aggregateSequence', 'scheduledEvents', 'createIndexes'] as const
  ).map((key) => check.bool(key, options[key], OUTBOX_DEFAULTS[key]));
  if (options.relay !== undefined && options.relay !== false && !isOptionObject(options.relay)) {
    check.fail(
      'relay',
      `expected an object or false, got ${showOption(options.relay)}`,
      'Pass relay options as an object, omit them for the defaults, or false for an app that only writes events.',
    );
  }
  if (options.consumer !== undefined && !isOptionObject(options.consumer)) {
    check.fail(
      'consumer',
      `expected an object, got ${showOption(options.consumer)}`,
      'Pass consumer options as an object, or omit them for the defaults.',
    );
  }
  const relay = options.relay === false ? false : resolveRelayOptions(options.relay);
  const consumer = resolveConsumerOptions(options.consumer);
  const tenants = resolveTenantsOptions(check, options.tenants);

  return {
    ...(connectionName !== undefined ? { connectionName } : {}),
    collections,
    maxPayloadBytes,
    allowBigInt,
    aggregateSequence,
    scheduledEvents,
    createIndexes,
    relay,
    consumer,
    tenants,
  };
}
