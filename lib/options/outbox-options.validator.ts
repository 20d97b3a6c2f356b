import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveConsumerOptions } from '../consumer/consumer.options';
import { resolveRelayOptions } from '../relay/relay.options';
import type { OutboxCollections, OutboxModuleOptions } from './outbox-options.interface';
import {
  MAX_PAYLOAD_BYTES_LIMIT,
  OUTBOX_DEFAULTS,
  OUTBOX_DEFAULT_COLLECTIONS,
} from './outbox.defaults';
import type { ResolvedOutboxOptions } from './resolved-options';

const TOP_LEVEL_KEYS: readonly (keyof OutboxModuleOptions)[] = [
  'collections',
  'maxPayloadBytes',
  'allowBigInt',
  'aggregateSequence',
  'createIndexes',
  'relay',
  'consumer',
];
const COLLECTION_KEYS = Object.keys(OUTBOX_DEFAULT_COLLECTIONS) as (keyof OutboxCollections)[];
/** Bytes; MongoDB allows 255 for `<db>.<collection>`, leave room for the database name. */
const MAX_COLLECTION_NAME_BYTES = 120;

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
  const options = raw ?? {};
  if (!isObject(options)) {
    throw new OutboxOptionsError(
      '(options)',
      `expected an object, got ${kind(options)}`,
      'Pass an object to OutboxModule.forRoot({...}) or return one from the forRootAsync useFactory.',
    );
  }
  if (Object.hasOwn(options, 'connectionName')) {
    throw new OutboxOptionsError(
      'connectionName',
      "it names the module's connection, and the module's injection tokens depend on it, so it cannot come from the forRootAsync useFactory",
      "Give it to OutboxModule.forRootAsync({ connectionName: '...', useFactory }) itself, next to useFactory, as with MongooseModule.forRootAsync.",
    );
  }
  rejectUnknownKeys(options, TOP_LEVEL_KEYS, '');

  if (
    connectionName !== undefined &&
    (typeof connectionName !== 'string' || connectionName === '')
  ) {
    throw new OutboxOptionsError(
      'connectionName',
      `expected a non-empty string, got ${kind(connectionName)}`,
      'Use the connectionName you gave MongooseModule.forRoot(uri, { connectionName }), or omit it for the default connection.',
    );
  }

  const collections = resolveCollections(options.collections);
  const maxPayloadBytes = options.maxPayloadBytes ?? OUTBOX_DEFAULTS.maxPayloadBytes;
  if (
    typeof maxPayloadBytes !== 'number' ||
    !Number.isInteger(maxPayloadBytes) ||
    maxPayloadBytes < 1 ||
    maxPayloadBytes > MAX_PAYLOAD_BYTES_LIMIT
  ) {
    throw new OutboxOptionsError(
      'maxPayloadBytes',
      `expected an integer from 1 to ${MAX_PAYLOAD_BYTES_LIMIT}, got ${kind(maxPayloadBytes)}`,
      `Omit it for the default (${OUTBOX_DEFAULTS.maxPayloadBytes}, below Kafka's default message.max.bytes), or give a byte count the broker accepts.`,
    );
  }
  const allowBigInt = resolveBoolean(
    'allowBigInt',
    options.allowBigInt,
    OUTBOX_DEFAULTS.allowBigInt,
  );
  const aggregateSequence = resolveBoolean(
    'aggregateSequence',
    options.aggregateSequence,
    OUTBOX_DEFAULTS.aggregateSequence,
  );
  const createIndexes = resolveBoolean(
    'createIndexes',
    options.createIndexes,
    OUTBOX_DEFAULTS.createIndexes,
  );

  if (options.relay !== undefined && options.relay !== false && !isObject(options.relay)) {
    throw new OutboxOptionsError(
      'relay',
      `expected an object or false, got ${kind(options.relay)}`,
      'Pass relay options as an object, omit them for the defaults, or false for an app that only writes events.',
    );
  }
  if (options.consumer !== undefined && !isObject(options.consumer)) {
    throw new OutboxOptionsError(
      'consumer',
      `expected an object, got ${kind(options.consumer)}`,
      'Pass consumer options as an object, or omit them for the defaults.',
    );
  }
  const relay = options.relay === false ? false : resolveRelayOptions(options.relay);
  const consumer = resolveConsumerOptions(options.consumer);

  return {
    ...(connectionName !== undefined ? { connectionName } : {}),
    collections,
    maxPayloadBytes,
    allowBigInt,
    aggregateSequence,
    createIndexes,
    relay,
    consumer,
  };
}

function resolveCollections(raw: unknown): Required<OutboxCollections> {
  if (raw === undefined) return { ...OUTBOX_DEFAULT_COLLECTIONS };
  if (!isObject(raw)) {
    throw new OutboxOptionsError(
      'collections',
      `expected an object, got ${kind(raw)}`,
      `Pass an object with any of: ${COLLECTION_KEYS.join(', ')}.`,
    );
  }
  rejectUnknownKeys(raw, COLLECTION_KEYS, 'collections.');
  const resolved = {
    ...OUTBOX_DEFAULT_COLLECTIONS,
    ...definedOnly(raw),
  } as Required<OutboxCollections>;
  const seen = new Map<string, string>();
  for (const key of COLLECTION_KEYS) {
    const name = resolved[key];
    const option = `collections.${key}`;
    const problem = collectionNameProblem(name);
    if (problem) {
      throw new OutboxOptionsError(
        option,
        problem,
        `Use a MongoDB collection name: 1 to ${MAX_COLLECTION_NAME_BYTES} bytes, no '$' or NUL, not starting with 'system.', e.g. '${OUTBOX_DEFAULT_COLLECTIONS[key]}'.`,
      );
    }
    const other = seen.get(name);
    if (other) {
      throw new OutboxOptionsError(
        option,
        `uses the collection '${name}', already used by collections.${other}`,
        'Give every collection option its own name.',
      );
    }
    seen.set(name, key);
  }
  return resolved;
}

function collectionNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `expected a string, got ${kind(name)}`;
  if (name === '') return 'is empty';
  if (Buffer.byteLength(name, 'utf8') > MAX_COLLECTION_NAME_BYTES) {
    return `is longer than ${MAX_COLLECTION_NAME_BYTES} bytes`;
  }
  if (name.includes('$')) return `'${name}' contains '$'`;
  if (name.includes('\u0000')) return 'contains a NUL character';
  if (name.startsWith('system.')) return `'${name}' starts with 'system.' (reserved by MongoDB)`;
  if (name.startsWith('.') || name.endsWith('.')) return `'${name}' starts or ends with '.'`;
  return undefined;
}

function resolveBoolean(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new OutboxOptionsError(
      option,
      `expected true or false, got ${kind(value)}`,
      `Omit it for the default (${fallback}).`,
    );
  }
  return value;
}

/** Throws for the first key not in `known`, suggesting the closest known one. */
export function rejectUnknownKeys(
  value: Record<string, unknown>,
  known: readonly string[],
  prefix: string,
): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const close = closest(key, known);
    throw new OutboxOptionsError(
      `${prefix}${key}`,
      'is not a known option',
      (close ? `Did you mean "${prefix}${close}"? ` : '') +
        `Known options${prefix ? ` of ${prefix.slice(0, -1)}` : ''}: ${known.join(', ')}.`,
    );
  }
}

function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

function definedOnly(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/** Any non-array object (config classes included). */
function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
