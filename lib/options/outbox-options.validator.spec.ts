import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import type { OutboxModuleOptions } from './outbox-options.interface';
import { resolveOutboxOptions } from './outbox-options.validator';

function errorOf(options: unknown): OutboxOptionsError {
  try {
    resolveOutboxOptions(options as OutboxModuleOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxOptionsError);
    return error as OutboxOptionsError;
  }
  throw new Error('expected an OutboxOptionsError');
}

describe('OutboxModule options', () => {
  it('merges the defaults', () => {
    const resolved = resolveOutboxOptions({ relay: false });
    expect(resolved).toMatchObject({
      collections: {
        outbox: 'outbox',
        deadLetters: 'outbox_dead_letters',
        relayState: 'outbox_relay_state',
        processedEvents: 'outbox_processed_events',
        consumerDeadLetters: 'outbox_consumer_dead_letters',
        sequences: 'outbox_sequences',
      },
      maxPayloadBytes: 900_000,
      allowBigInt: false,
      aggregateSequence: false,
      createIndexes: true,
    });
    expect(resolved).not.toHaveProperty('connectionName');
    expect(resolved.consumer).toBeDefined();
  });

  it('keeps what is given', () => {
    const resolved = resolveOutboxOptions(
      {
        collections: { outbox: 'order_events', deadLetters: undefined },
        maxPayloadBytes: 1000,
        allowBigInt: true,
        aggregateSequence: true,
        createIndexes: false,
        relay: false,
      },
      'orders',
    );
    expect(resolved.connectionName).toBe('orders');
    expect(resolved.collections.outbox).toBe('order_events');
    expect(resolved.collections.deadLetters).toBe('outbox_dead_letters');
    expect(resolved).toMatchObject({
      maxPayloadBytes: 1000,
      allowBigInt: true,
      aggregateSequence: true,
      createIndexes: false,
      relay: false,
    });
  });

  it('refuses a connectionName coming from the options (the forRootAsync factory), saying where it goes', () => {
    const error = errorOf({ connectionName: 'orders' });
    expect(error.option).toBe('connectionName');
    expect(error.message).toMatch(/forRootAsync\(\{ connectionName: '\.\.\.', useFactory \}\)/);
  });

  it('rejects an empty connection name', () => {
    expect(() => resolveOutboxOptions({}, '')).toThrow(
      /"connectionName": expected a non-empty string/,
    );
  });

  it('rejects an unknown top-level key and suggests the closest one', () => {
    const error = errorOf({ maxPayloadByte: 10 });
    expect(error.option).toBe('maxPayloadByte');
    expect(error.code).toBe('OUTBOX_INVALID_OPTIONS');
    expect(error.message).toMatch(/is not a known option\. Did you mean "maxPayloadBytes"\?/);
  });

  it('rejects an unknown collections key', () => {
    const error = errorOf({ collections: { outbx: 'x' } });
    expect(error.option).toBe('collections.outbx');
    expect(error.message).toMatch(/Did you mean "collections\.outbox"/);
  });

  it.each([
    ['options', 'yes', '(options)'],
    ['connectionName', { connectionName: '' }, 'connectionName'],
    ['connectionName', { connectionName: 3 }, 'connectionName'],
    ['maxPayloadBytes', { maxPayloadBytes: 0 }, 'maxPayloadBytes'],
    ['maxPayloadBytes', { maxPayloadBytes: 1.5 }, 'maxPayloadBytes'],
    ['maxPayloadBytes', { maxPayloadBytes: '1000' }, 'maxPayloadBytes'],
    ['maxPayloadBytes', { maxPayloadBytes: 64 * 1024 * 1024 }, 'maxPayloadBytes'],
    ['allowBigInt', { allowBigInt: 'true' }, 'allowBigInt'],
    ['aggregateSequence', { aggregateSequence: 'yes' }, 'aggregateSequence'],
    ['createIndexes', { createIndexes: 1 }, 'createIndexes'],
    ['relay', { relay: true }, 'relay'],
    ['consumer', { consumer: [] }, 'consumer'],
    ['collections', { collections: 'outbox' }, 'collections'],
  ])('rejects a bad %s (%j)', (_what, options, option) => {
    const error = errorOf(options);
    expect(error.option).toBe(option);
    expect(error.message).toContain(`Invalid OutboxModule option "${option}"`);
  });

  it.each([
    ['empty', ''],
    ['with $', 'out$box'],
    ['with NUL', 'out\u0000box'],
    ['system.', 'system.outbox'],
    ['a trailing dot', 'outbox.'],
    ['too long', 'x'.repeat(121)],
    ['not a string', 7],
  ])('rejects a collection name that is %s', (_what, name) => {
    const error = errorOf({ collections: { relayState: name } });
    expect(error.option).toBe('collections.relayState');
    expect(error.message).toMatch(/MongoDB collection name/);
  });

  it('rejects two collection options naming the same collection', () => {
    const error = errorOf({ collections: { outbox: 'events', deadLetters: 'events' } });
    expect(error.option).toBe('collections.deadLetters');
    expect(error.message).toMatch(/already used by collections\.outbox/);
  });

  it('lets the relay and consumer sections validate their own keys', () => {
    // The sections are resolved by lib/relay and lib/consumer, which name their options.
    expect(errorOf({ relay: { noSuchRelayOption: 1 } }).option).toMatch(/^relay\./);
    expect(errorOf({ relay: false, consumer: { noSuchConsumerOption: 1 } }).option).toMatch(
      /^consumer\./,
    );
  });

  it('does not resolve the relay section when relay is false', () => {
    expect(resolveOutboxOptions({ relay: false }).relay).toBe(false);
  });
});
