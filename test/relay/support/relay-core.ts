import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import type { OutboxPublisher } from '../../../lib/publisher/outbox-publisher.interface';
import { RelayEngine } from '../../../lib/relay/engine/relay.engine';
import type { RelayEngineOptions } from '../../../lib/relay/engine/relay.engine';
import { systemClock } from '../../../lib/relay/ports/relay-clock';
import { nestRelayLoggers } from '../../../lib/relay/ports/relay-logger';
import { OutboxRelayMetrics } from '../../../lib/relay/relay.metrics';
import { FencedWrites } from '../../../lib/relay/term/fenced.writes';
import type { OutboxRelayStore } from '../../../lib/relay/ports/outbox-relay.store';

/**
 * The relay's core (`RelayEngine`) over an in-memory outbox and a real publisher: what the
 * relay itself costs and does, without MongoDB. `offer` hands events over as the change
 * stream does (under an in-memory reservation, waiting for room).
 */
export function relayCore(
  store: OutboxRelayStore,
  publisher: OutboxPublisher,
  options: Partial<RelayEngineOptions> & Pick<RelayEngineOptions, 'batchSize' | 'maxInFlight'>,
) {
  const metrics = new OutboxRelayMetrics();
  const engine = new RelayEngine(
    {
      maxBatchBytes: 1_000_000,
      maxInFlightBytes: 64 * 1024 * 1024,
      maxAttempts: 10,
      backoff: { initialMs: 200, maxMs: 2000, jitter: 0.2 },
      publishConcurrency: Math.min(
        4,
        Math.max(1, Math.floor(options.maxInFlight / options.batchSize)),
      ),
      ...options,
    },
    {
      outbox: store,
      writes: new FencedWrites(store, null, () => true),
      publisher,
      clock: systemClock,
      now: Date.now,
      canPublish: () => true,
      random: Math.random,
      logger: nestRelayLoggers('RelayEngine'),
      holdsLogger: nestRelayLoggers('RelayDestinations'),
      metrics,
    },
  );
  const offer = async (
    events: OutboxEventRecord[],
    settle: () => void = () => undefined,
  ): Promise<void> => {
    for (let i = 0; i < events.length;) {
      const reservation = await engine.budget.reserve(
        Math.min(options.batchSize, events.length - i),
      );
      if (reservation.events === 0) return;
      const page = events.slice(i, i + reservation.events);
      engine.offer(
        page.map((event) => ({ event, settle })),
        reservation,
      );
      i += page.length;
    }
  };
  return { engine, metrics, offer };
}
