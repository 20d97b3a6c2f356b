import { describeError } from '../../lib/common/errors/describe-error';
import { classifyKafkaError } from '../../lib/publisher/kafka/kafka-error.classifier';
import type { KafkaErrorScope } from '../../lib/publisher/kafka/kafka-error.classifier';
import { isPartitionNotInMetadata } from '../../lib/publisher/kafka/kafka.sender';
import type { KafkaSender, PartitionedMessage } from '../../lib/publisher/kafka/kafka.sender';
import type { KafkaFaultProxy } from '../harness';
import { sleep } from '../harness';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';
import { neverReportedStoredWhenNot, settle } from './support/send-outcome';
import type { SendOutcome } from './support/send-outcome';

/** The senders' own retries in this suite: a fault armed `SEND_ATTEMPTS` times fails a send. */
export const FAULT_RETRIES = 2;
const SEND_ATTEMPTS = FAULT_RETRIES + 1;
/** How long a send may take here before the case fails it (a sender must settle on its own). */
const SEND_DEADLINE_MS = 20_000;
/**
 * The senders' request timeout in the late-response cases, and the delay that passes it. The
 * responses behind a late one on its connection wait too (Kafka answers in order), so a
 * connection the client keeps after a timeout answers again `SEND_ATTEMPTS * LATE_BY_MS` later.
 */
const REQUEST_TIMEOUT_MS = 1_000;
const LATE_BY_MS = 2_000;
/** Sends of the next batch, as the relay would retry it (each checked by the invariant). */
const NEXT_ATTEMPTS = 5;

export interface FaultSenderOptions {
  idempotent: boolean;
  /** ms; the fixture's default otherwise. */
  requestTimeout?: number;
}

/** One client on the real broker, reached through the Kafka fault proxy. */
export interface KafkaSenderFaultsFixture {
  proxy: KafkaFaultProxy;
  /** Two partitions, empty. */
  topic: string;
  /**
   * A sender of this client (retries `FAULT_RETRIES`) whose only broker is the proxy, not yet
   * connected; the fixture disconnects it on `close`.
   */
  sender(options: FaultSenderOptions): Promise<KafkaSender>;
  /** What `topic` stored: each partition's `ce_id` headers in offset order (read directly). */
  stored(topic: string): Promise<Record<number, string[]>>;
  /** A fresh topic of two partitions with these settings; deleted on `close`. */
  createTopic(config: Record<string, string>): Promise<string>;
  /** Raises `topic`'s partition count to `total` (admin CreatePartitions, direct listener). */
  addPartitions(topic: string, total: number): Promise<void>;
  /** Stops the managed broker and starts it again (same ports, same data). */
  restartBroker(between: () => Promise<void>): Promise<void>;
  /** Shifts the clock of the process `sender` runs in by `ms` (0 restores it). */
  skewClock(sender: KafkaSender, ms: number): Promise<void>;
  close(): Promise<void>;
}

export const KAFKA_SENDER_FAULT_CASES = {
  ambiguousAck:
    'ambiguous ack (stored, every response dropped, connection closed): never reported stored when not, a rejection is classified broker, and a next batch of the same count is stored',
  ambiguousAckIdempotent:
    'idempotent: ambiguous ack (stored, every response dropped): never reported stored when not, a rejection is classified broker, and after replaceProducer() a next batch of the same count is stored (not answered as a duplicate of the old one)',
  lateResponse:
    'a response later than the client’s request timeout: never reported stored when not, a rejection is classified broker, and a next batch of the same count is stored',
  lateResponseIdempotent:
    'idempotent: a response later than the client’s request timeout: never reported stored when not, a rejection is classified broker, and after replaceProducer() a next batch of the same count is stored',
  cutRequest:
    'the connection cut mid-request: a rejected batch is not stored, classified broker; a next batch is stored',
  cutRequestIdempotent:
    'idempotent: the connection cut mid-request: a rejected batch is not stored, classified broker; after replaceProducer() a next batch is stored',
  partitionsGrow:
    'a topic gaining partitions while publishing: a batch for a new partition is stored, or refused classified partition (never topic: the rest of the topic is not held) until replaceProducer(), never reported stored when not',
  brokerRestart:
    'idempotent: a broker restart with sends in flight: no send reported stored when not, no rejection counted against the event, and after replaceProducer() a next batch is stored',
  invalidTimestamp:
    'a clock skewed past the topic’s message.timestamp.after.max.ms (KIP-937): rejected, nothing stored, classified INVALID_TIMESTAMP and not counted against the event; with the clock right again a batch is stored',
} as const;

export type KafkaSenderFaultCase = keyof typeof KAFKA_SENDER_FAULT_CASES;

let counter = 0;
/** `count` messages for `partition`, ids `<prefix>-<n>` unique to the run. */
function batch(prefix: string, count: number, partition = 0): PartitionedMessage[] {
  const run = ++counter;
  return Array.from({ length: count }, (_, i) => ({
    key: `key-${prefix}-${i}`,
    value: `value-${prefix}-${i}`,
    headers: { ce_id: `${prefix}-${run}-${i}`, ce_type: 'Created' },
    partition,
  }));
}

const idsOf = (messages: readonly PartitionedMessage[]): string[] =>
  messages.map((m) => m.headers.ce_id);

/**
 * `KafkaSender.replaceProducer()`: retires the producer, the next send uses a new one (a new
 * producer id); never rejects. The publisher calls it after an idempotent send failed: without
 * it, the next batch of the same record count is answered as a duplicate, not stored.
 */
async function replaceProducer(sender: KafkaSender): Promise<void> {
  await sender.replaceProducer();
}

/** Scopes that cost an event an attempt or dead-letter it. */
const AGAINST_THE_EVENT: readonly KafkaErrorScope[] = ['event', 'size', 'invalid-topic'];

/** The error, its class and its chain, for a failure message. */
function described(error: unknown): string {
  return `${JSON.stringify(classifyKafkaError(error))} from ${describeError(error)}`;
}

function expectScope(outcome: SendOutcome, scope: KafkaErrorScope): void {
  if (outcome.status !== 'rejected') return;
  if (classifyKafkaError(outcome.error).scope !== scope) {
    throw new Error(`expected a rejection classified ${scope}, got ${described(outcome.error)}`);
  }
}

function expectNotAgainstTheEvent(error: unknown): void {
  if (AGAINST_THE_EVENT.includes(classifyKafkaError(error).scope)) {
    throw new Error(
      `a rejection that costs the event an attempt or dead-letters it: ${described(error)}`,
    );
  }
}

/** The fault half of the `KafkaSender` contract, on the real broker through the fault proxy. */
export function kafkaSenderFaultsContract(
  fixture: () => Promise<KafkaSenderFaultsFixture>,
  skips: ContractSkips<KafkaSenderFaultCase> = {},
): void {
  const test = contractCases(KAFKA_SENDER_FAULT_CASES, skips);
  let f: KafkaSenderFaultsFixture;
  beforeEach(async () => {
    f = await fixture();
  });
  afterEach(async () => {
    await f.close();
  });

  /**
   * `messages` sent until a send resolves, at most `NEXT_ATTEMPTS` times, 300 ms apart, as the
   * relay retries (replacing an idempotent producer after a failure): every outcome checked by
   * the invariant, the last one returned.
   */
  async function sendUntilStored(
    sender: KafkaSender,
    topic: string,
    messages: PartitionedMessage[],
    idempotent: boolean,
  ): Promise<SendOutcome> {
    let outcome: SendOutcome = { status: 'pending' };
    for (let attempt = 0; attempt < NEXT_ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(300);
      outcome = await settle(sender.send([{ topic, messages }]), SEND_DEADLINE_MS);
      await neverReportedStoredWhenNot(f.stored, topic, outcome, idsOf(messages));
      if (outcome.status === 'resolved') break;
      if (idempotent) await replaceProducer(sender);
    }
    return outcome;
  }

  /**
   * A connected sender that has stored one batch already (producer id, sequences, connections).
   * A topic just created can still be unknown to the broker's partition leader for a moment.
   */
  async function warmSender(options: FaultSenderOptions): Promise<KafkaSender> {
    const sender = await f.sender(options);
    await sender.connect();
    const warm = await sendUntilStored(sender, f.topic, batch('warm', 1), options.idempotent);
    if (warm.status !== 'resolved') {
      throw new Error(`the sender could not store on a healthy broker: ${JSON.stringify(warm)}`);
    }
    return sender;
  }

  /**
   * A batch sent under `fault` (then disarmed), then a next batch of the same count on the same
   * partition: the invariant on both, the first one's class, the next one stored.
   */
  async function faultThenNext(
    sender: KafkaSender,
    options: FaultSenderOptions,
    arm: () => { fired: number; disarm(): void },
    after?: (first: SendOutcome, ids: string[]) => Promise<void>,
  ): Promise<void> {
    const first = batch('first', 3);
    const fault = arm();
    const outcome = await settle(
      sender.send([{ topic: f.topic, messages: first }]),
      SEND_DEADLINE_MS,
    );
    fault.disarm();
    expect(fault.fired).toBeGreaterThanOrEqual(1);
    await neverReportedStoredWhenNot(f.stored, f.topic, outcome, idsOf(first));
    expectScope(outcome, 'broker');
    await after?.(outcome, idsOf(first));
    if (outcome.status === 'rejected' && options.idempotent) await replaceProducer(sender);
    const next = await sendUntilStored(sender, f.topic, batch('next', 3), options.idempotent);
    if (next.status === 'rejected') {
      throw new Error(`the next batch was never stored: ${described(next.error)}`);
    }
  }

  for (const idempotent of [false, true]) {
    const suffix = idempotent ? 'Idempotent' : '';
    const options: FaultSenderOptions = { idempotent };

    test(`ambiguousAck${suffix}` as KafkaSenderFaultCase, async () => {
      const sender = await warmSender(options);
      await faultThenNext(sender, options, () =>
        f.proxy.arm({
          api: 'Produce',
          topic: f.topic,
          action: 'drop-response-then-close',
          times: SEND_ATTEMPTS,
        }),
      );
    });

    test(`lateResponse${suffix}` as KafkaSenderFaultCase, async () => {
      const late = { ...options, requestTimeout: REQUEST_TIMEOUT_MS };
      const sender = await warmSender(late);
      await faultThenNext(sender, late, () =>
        f.proxy.arm({
          api: 'Produce',
          topic: f.topic,
          action: 'delay-response',
          delayMs: LATE_BY_MS,
          times: SEND_ATTEMPTS,
        }),
      );
    });

    test(`cutRequest${suffix}` as KafkaSenderFaultCase, async () => {
      const sender = await warmSender(options);
      await faultThenNext(
        sender,
        options,
        () =>
          f.proxy.arm({
            api: 'Produce',
            topic: f.topic,
            action: 'cut-request',
            forwardBytes: 20,
            times: SEND_ATTEMPTS,
          }),
        async (outcome, ids) => {
          if (outcome.status !== 'rejected') return;
          // The broker never had a whole request: nothing of it can be stored.
          const stored = Object.values(await f.stored(f.topic)).flat();
          expect(ids.filter((id) => stored.includes(id))).toEqual([]);
        },
      );
    });
  }

  test('partitionsGrow', async () => {
    const sender = await f.sender({ idempotent: false });
    await sender.connect();
    const old = [...batch('old', 1, 0), ...batch('old', 1, 1)];
    expect(await sendUntilStored(sender, f.topic, old, false)).toEqual({ status: 'resolved' });
    // Publishing goes on while the partitions are added.
    let publishing = true;
    const during: Array<{ outcome: SendOutcome; ids: string[] }> = [];
    const background = (async () => {
      while (publishing) {
        const messages = batch('during', 2, during.length % 2);
        during.push({
          outcome: await settle(sender.send([{ topic: f.topic, messages }]), SEND_DEADLINE_MS),
          ids: idsOf(messages),
        });
        await sleep(100);
      }
    })();
    try {
      await f.addPartitions(f.topic, 4);
      let last: SendOutcome | undefined;
      for (let round = 0; round < 3 && last?.status !== 'resolved'; round++) {
        const fresh = [...batch('new', 2, 2), ...batch('new', 2, 3)];
        last = await settle(sender.send([{ topic: f.topic, messages: fresh }]), SEND_DEADLINE_MS);
        await neverReportedStoredWhenNot(f.stored, f.topic, last, idsOf(fresh));
        expectScope(last, 'partition');
        // As the publisher does (`PartitionCounts.producerLacks`).
        if (last.status === 'rejected' && isPartitionNotInMetadata(last.error))
          await replaceProducer(sender);
        await sleep(500);
      }
      // Once its producer was replaced, the new partitions take the batch.
      expect(last?.status).toBe('resolved');
    } finally {
      publishing = false;
      await background;
    }
    const snapshot = await f.stored(f.topic);
    for (const { outcome, ids } of during) {
      await neverReportedStoredWhenNot(async () => snapshot, f.topic, outcome, ids);
    }
    // The old partitions were never held by the new ones.
    expect(during.filter(({ outcome }) => outcome.status !== 'resolved')).toEqual([]);
  });

  test('brokerRestart', async () => {
    const options = { idempotent: true };
    const sender = await warmSender(options);
    const sent: Array<{ outcome: SendOutcome; ids: string[] }> = [];
    let sending = true;
    const load = (async () => {
      while (sending) {
        const messages = batch('restart', 2);
        const outcome = await settle(
          sender.send([{ topic: f.topic, messages }]),
          SEND_DEADLINE_MS * 2,
        );
        sent.push({ outcome, ids: idsOf(messages) });
        // The publisher replaces the producer after an idempotent send failed.
        if (outcome.status === 'rejected') await replaceProducer(sender);
        await sleep(outcome.status === 'rejected' ? 300 : 50);
      }
    })();
    try {
      await sleep(500);
      await f.restartBroker(() => sleep(1000));
      await sleep(1500);
    } finally {
      sending = false;
      await load;
    }
    const snapshot = await f.stored(f.topic);
    for (const { outcome, ids } of sent) {
      await neverReportedStoredWhenNot(async () => snapshot, f.topic, outcome, ids);
      if (outcome.status === 'rejected') expectNotAgainstTheEvent(outcome.error);
    }
    expect(sent.length).toBeGreaterThan(1);
    const last = await sendUntilStored(sender, f.topic, batch('after-restart', 2), true);
    if (last.status === 'rejected') {
      throw new Error(`no batch stored after the restart: ${described(last.error)}`);
    }
  });

  test('invalidTimestamp', async () => {
    const topic = await f.createTopic({
      'message.timestamp.before.max.ms': '60000',
      'message.timestamp.after.max.ms': '60000',
    });
    const sender = await f.sender({ idempotent: false });
    await sender.connect();
    // The sender takes no timestamp (the client stamps each record with its clock's time): a
    // relay host whose clock runs an hour ahead.
    await f.skewClock(sender, 60 * 60_000);
    const skewed = batch('skewed', 2);
    let outcome: SendOutcome;
    try {
      outcome = await settle(sender.send([{ topic, messages: skewed }]), SEND_DEADLINE_MS);
    } finally {
      await f.skewClock(sender, 0);
    }
    expect(outcome.status).toBe('rejected');
    expect(await f.stored(topic)).toEqual({});
    const error = (outcome as { error: unknown }).error;
    if (classifyKafkaError(error).type !== 'INVALID_TIMESTAMP') {
      throw new Error(`expected INVALID_TIMESTAMP, got ${described(error)}`);
    }
    expectNotAgainstTheEvent(error);
    const right = batch('right', 2);
    expect(await sendUntilStored(sender, topic, right, false)).toEqual({ status: 'resolved' });
    expect(await f.stored(topic)).toEqual({ 0: idsOf(right) });
  });
}
