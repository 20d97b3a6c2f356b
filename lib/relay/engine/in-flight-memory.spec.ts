import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { OutboxPublisher, PublishOutcome } from '../../publisher/outbox-publisher.interface';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { EVENT_FIXED_BYTES, EVENT_WIRE_FACTOR, eventMemoryBytes } from './event-memory';
import { RelayEngine } from './relay.engine';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };
const WIRE = 1_000;

/** Every event is `WIRE` bytes on the wire; a call answers when `answer()` is called. */
class GatedPublisher implements OutboxPublisher {
  readonly calls: OutboxEventRecord[][] = [];
  private readonly gates: Array<() => void> = [];
  connect = async (): Promise<void> => undefined;
  disconnect = async (): Promise<void> => undefined;
  sizeOf = (): number => WIRE;

  publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    this.calls.push([...events]);
    return new Promise((resolve) =>
      this.gates.push(() => resolve(events.map(() => ({ status: 'ok' }) as const))),
    );
  }

  answerAll(): void {
    for (const gate of this.gates.splice(0)) gate();
  }
}

function setup() {
  const store = new InMemoryRelayStore();
  const publisher = new GatedPublisher();
  const engine = new RelayEngine(
    {
      batchSize: 10,
      // Two events on the wire: a batch is bounded by wire bytes, not by their memory.
      maxBatchBytes: 2 * WIRE,
      maxInFlight: 100,
      maxInFlightBytes: 100 * eventMemoryBytes(WIRE),
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 40, jitter: 0 },
      publishConcurrency: 4,
    },
    {
      outbox: store,
      writes: new FencedWrites(store, null, () => true),
      publisher,
      clock: systemClock,
      now: Date.now,
      canPublish: () => true,
      random: () => 0.5,
      logger: silent,
      holdsLogger: silent,
      metrics: new OutboxRelayMetrics(),
    },
  );
  return { store, publisher, engine };
}

describe('the in-flight budget counts what an event costs in memory', () => {
  it('is a fixed part plus a factor of the wire size, more than the wire size alone', () => {
    expect(eventMemoryBytes(WIRE)).toBe(EVENT_FIXED_BYTES + EVENT_WIRE_FACTOR * WIRE);
    expect(eventMemoryBytes(0)).toBeGreaterThan(0);
    expect(eventMemoryBytes(WIRE)).toBeGreaterThan(2 * WIRE);
  });

  it('charges each held event its memory estimate, batches by wire bytes, and gives it all back once published', async () => {
    const { store, publisher, engine } = setup();
    const docs = Array.from({ length: 6 }, (_, i) => store.insert({ aggregateId: `a${i}` }));
    let settled = 0;
    const reservation = await engine.budget.reserve(docs.length);
    engine.offer(
      docs.map((event) => ({ event, settle: () => settled++ })),
      reservation,
    );
    expect(engine.status().inFlight).toEqual({ events: 6, bytes: 6 * eventMemoryBytes(WIRE) });
    // 6 events of 1 000 wire bytes under maxBatchBytes 2 000: three calls of two.
    expect(publisher.calls.map((call) => call.length)).toEqual([2, 2, 2]);
    publisher.answerAll();
    const until = Date.now() + 3000;
    while (settled < 6 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(settled).toBe(6);
    expect(engine.status().inFlight).toEqual({ events: 0, bytes: 0 });
    await engine.close(100);
  });
});
