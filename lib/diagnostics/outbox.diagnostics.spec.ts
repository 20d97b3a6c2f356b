import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { DestinationHolds } from '../relay/engine/destination.holds';
import { OUTBOX_CHANNELS, outboxChannels } from './diagnostic-channels';
import { diagnosticMessages, outboxDiagnostics } from './outbox.diagnostics';

const event = {
  eventId: 'e-1',
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: 'o-1',
};
const message = { topic: 'orders', partition: 2, offset: '41' };
const letter = {
  consumer: 'billing',
  eventId: 'e-1',
  reason: 'max-failures',
  attempts: 3,
  lastError: 'boom',
  message,
};

/** Every helper, called once with its arguments. */
function publishAll(): void {
  outboxDiagnostics.relayPublished([{ event }, { event: { ...event, eventId: 'e-2' } }]);
  outboxDiagnostics.relayRetryScheduled(
    event,
    { attempts: 1, nextAttemptAt: new Date(5000), error: 'timeout' },
    10,
  );
  outboxDiagnostics.relayDeadLettered(event, { reason: 'rejected', attempts: 1, error: 'too big' });
  outboxDiagnostics.relayDestinationHeld('orders', 'unknown topic', 1000);
  outboxDiagnostics.relayDestinationReleased('orders', 3, 2500, 'accepted');
  outboxDiagnostics.relayLeaseTaken('outbox', 'host-1', 7);
  outboxDiagnostics.relayLeaseLost('outbox', 'host-1', 'the relay is stopping', true);
  outboxDiagnostics.relayPartitionHandedOver('outbox', 'host-1', 3, 8, 4);
  outboxDiagnostics.consumerApplied('billing', 'e-1', message);
  outboxDiagnostics.consumerSkipped('billing', 'e-1', message);
  outboxDiagnostics.consumerDeadLettered(letter);
}

describe('outbox diagnostics channels', () => {
  afterEach(() => jest.restoreAllMocks());

  it('are namespaced under nestjs-outbox:', () => {
    for (const name of Object.values(OUTBOX_CHANNELS)) {
      expect(name).toMatch(/^nestjs-outbox:(relay|consumer):[a-z-]+$/);
    }
    expect(new Set(Object.values(OUTBOX_CHANNELS)).size).toBe(Object.keys(OUTBOX_CHANNELS).length);
  });

  it('build and publish nothing while nobody subscribes', () => {
    const builders = [
      jest.spyOn(diagnosticMessages, 'relayEvent'),
      jest.spyOn(diagnosticMessages, 'consumerEvent'),
    ];
    const publishes = Object.values(outboxChannels).map((channel) =>
      jest.spyOn(channel, 'publish'),
    );
    for (const channel of Object.values(outboxChannels)) expect(channel.hasSubscribers).toBe(false);

    publishAll();

    for (const builder of builders) expect(builder).not.toHaveBeenCalled();
    for (const publish of publishes) expect(publish).not.toHaveBeenCalled();
  });

  it('publish each event with its documented shape once subscribed', () => {
    const seen: Array<[string, unknown]> = [];
    const listeners = Object.values(OUTBOX_CHANNELS).map((name) => {
      const listener = (msg: unknown) => seen.push([name, msg]);
      subscribe(name, listener);
      return [name, listener] as const;
    });
    try {
      publishAll();
    } finally {
      for (const [name, listener] of listeners) unsubscribe(name, listener);
    }
    const from = { consumer: 'billing', eventId: 'e-1', ...message };
    expect(seen).toEqual([
      ['nestjs-outbox:relay:published', event],
      ['nestjs-outbox:relay:published', { ...event, eventId: 'e-2' }],
      [
        'nestjs-outbox:relay:retry-scheduled',
        { ...event, attempts: 1, maxAttempts: 10, nextAttemptAt: new Date(5000), error: 'timeout' },
      ],
      [
        'nestjs-outbox:relay:dead-lettered',
        { ...event, reason: 'rejected', attempts: 1, error: 'too big' },
      ],
      [
        'nestjs-outbox:relay:destination-held',
        { destination: 'orders', error: 'unknown topic', since: new Date(1000) },
      ],
      [
        'nestjs-outbox:relay:destination-released',
        { destination: 'orders', failures: 3, heldMs: 2500, reason: 'accepted' },
      ],
      ['nestjs-outbox:relay:lease-taken', { relay: 'outbox', owner: 'host-1', fencing: 7 }],
      [
        'nestjs-outbox:relay:lease-lost',
        { relay: 'outbox', owner: 'host-1', reason: 'the relay is stopping', released: true },
      ],
      [
        'nestjs-outbox:relay:partition-handed-over',
        { relay: 'outbox', owner: 'host-1', partition: 3, partitions: 8, share: 4 },
      ],
      ['nestjs-outbox:consumer:applied', from],
      ['nestjs-outbox:consumer:skipped', from],
      [
        'nestjs-outbox:consumer:dead-lettered',
        { ...from, reason: 'max-failures', attempts: 3, error: 'boom' },
      ],
    ]);
    for (const channel of Object.values(outboxChannels)) expect(channel.hasSubscribers).toBe(false);
  });

  it('build only the messages of the channel subscribed to', () => {
    const relayEvent = jest.spyOn(diagnosticMessages, 'relayEvent');
    const consumerEvent = jest.spyOn(diagnosticMessages, 'consumerEvent');
    const listener = jest.fn();
    subscribe(OUTBOX_CHANNELS.consumerApplied, listener);
    try {
      publishAll();
    } finally {
      unsubscribe(OUTBOX_CHANNELS.consumerApplied, listener);
    }
    expect(listener).toHaveBeenCalledTimes(1);
    expect(consumerEvent).toHaveBeenCalledTimes(1);
    expect(relayEvent).not.toHaveBeenCalled();
  });

  it('see a destination held once and released once, where the relay logs it', () => {
    const seen: Array<[string, unknown]> = [];
    const held = (msg: unknown) => seen.push(['held', msg]);
    const released = (msg: unknown) => seen.push(['released', msg]);
    subscribe(OUTBOX_CHANNELS.relayDestinationHeld, held);
    subscribe(OUTBOX_CHANNELS.relayDestinationReleased, released);
    const logger = { log: jest.fn(), warn: jest.fn(), error: jest.fn(), debug: jest.fn() };
    try {
      const holds = new DestinationHolds(
        { initialMs: 100, maxMs: 1000, jitter: 0 },
        () => 0.5,
        logger,
      );
      holds.fail('orders', 'lane-1', 'unknown topic', 1000);
      holds.fail('orders', 'lane-2', 'unknown topic', 1100); // the same hold, extended
      holds.succeeded(['orders', 'payments'], 4000);
      holds.succeeded(['orders'], 5000); // released already
    } finally {
      unsubscribe(OUTBOX_CHANNELS.relayDestinationHeld, held);
      unsubscribe(OUTBOX_CHANNELS.relayDestinationReleased, released);
    }
    expect(seen).toEqual([
      ['held', { destination: 'orders', error: 'unknown topic', since: new Date(1000) }],
      ['released', { destination: 'orders', failures: 2, heldMs: 3000, reason: 'accepted' }],
    ]);
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.log).toHaveBeenCalledTimes(1);
  });
});
