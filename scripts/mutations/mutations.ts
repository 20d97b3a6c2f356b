/**
 * The deliberate defects `npm run mutations` puts into lib/, one at a time, to show that the
 * checks of `npm test` catch each of them (issue 19, item 4). Each is a mistake a developer
 * could plausibly make, written as an exact edit: `find` must occur exactly once in `file`
 * (else the mutation is reported BROKEN: the code moved, update the anchor), and is replaced by
 * `replace`. The mutated file must still compile.
 *
 * `checks` says what should catch it:
 * - `simulation`: the schedules the simulation specs of `npm test` run (single-relay, scheduled,
 *   graceful stops, partitioned, hand-overs; their seed and run counts read from the spec files), then
 *   the saved findings; stops at the first run that breaks an invariant;
 * - `jest`: these spec files (contract suites of the production adapters, unit specs); caught
 *   when one of their tests fails.
 *
 * A new invariant or fault kind comes with the mutation that shows it bites (CONTRIBUTING.md).
 */

export type MutationCheck = 'simulation' | { jest: readonly string[] };

export interface Mutation {
  /** Short, unique, kebab-case: `npm run mutations -- --only <id>`. */
  id: string;
  /** The defect, as it would show in production. */
  description: string;
  /** Path from the repository's root, under lib/. */
  file: string;
  /** Applied in order; each `find` must occur exactly once in the file as it then is. */
  edits: ReadonlyArray<{ find: string; replace: string }>;
  /** Run in order until one catches the mutation. */
  checks: readonly MutationCheck[];
}

const CHANGE_SOURCE_CONTRACT = 'test/contracts/change-source.mongo.e2e-spec.ts';
const OUTBOX_STORE_CONTRACT = 'test/contracts/outbox-relay.store.mongo.e2e-spec.ts';

export const MUTATIONS: readonly Mutation[] = [
  // ------------------------------------------------------------ issue 19's table
  {
    id: 'catch-up-not-counted',
    description:
      'catch-up pages are settled as if empty: the events they bring into memory are never counted in the in-flight budget (count and bytes)',
    file: 'lib/relay/engine/catchup.reader.ts',
    edits: [
      {
        find: '    deps.budget.settleReservation(reservation, held.count, held.bytes);\n',
        replace: '    deps.budget.settleReservation(reservation, 0, 0);\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'byte-budget-dropped',
    description:
      'the in-flight budget checks only the event count: reads go on whatever the bytes held (maxInFlightBytes ignored)',
    file: 'lib/relay/engine/in-flight.budget.ts',
    edits: [
      {
        find: '      this.expectedBytes < this.maxBytes &&\n',
        replace: '',
      },
      {
        find:
          '    const room = Math.floor((this.maxBytes - this.expectedBytes) / this.averageBytes);\n' +
          '    return Math.max(1, Math.min(events, room));\n',
        replace: '    return events;\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'fence-filter-dropped',
    description:
      'the MongoDB store stamps its writes with the fence but no longer conditions them on it: a deposed leader overwrites what a newer one wrote',
    file: 'lib/relay/mongo/mongo-outbox-relay.store.ts',
    edits: [
      {
        find: 'return { filter: { relayFence: { $not: { $gt: fence } } }, stamp: { relayFence: fence } };',
        replace: 'return { filter: {}, stamp: { relayFence: fence } };',
      },
    ],
    checks: [{ jest: [OUTBOX_STORE_CONTRACT] }],
  },
  {
    id: 'position-lost-as-transient',
    description:
      '286 ChangeStreamHistoryLost is left out of the lost-position codes: the relay reopens the stream from the lost token forever instead of recovering from the collection',
    file: 'lib/relay/mongo/mongo-change.source.ts',
    edits: [{ find: 'new Set([286, 280, 260])', replace: 'new Set([280, 260])' }],
    checks: [{ jest: ['lib/relay/mongo/mongo-change.source.spec.ts', CHANGE_SOURCE_CONTRACT] }],
  },
  {
    id: 'send-without-lease-check',
    description:
      'the term gives the engine no lease check for the moment right before a send: a batch taken while the lease was valid is sent after it ran out (a pause between taking and sending)',
    file: 'lib/relay/term/relay.term.ts',
    edits: [{ find: '      leaseValid: () => lease.isValid(),\n', replace: '' }],
    // Not 'simulation' alone: it no longer catches this (3193 runs survived, the saved finding
    // paused-relay-sends-after-its-lease-ran-out included, presumably no longer reaching its
    // pause between taking a batch and sending it since the relay's timing changed).
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'write-lease-guard-removed',
    description:
      "the term's writes no longer check the local lease validity before they are sent (the store's fence is trusted alone)",
    file: 'lib/relay/term/fenced.writes.ts',
    edits: [
      {
        find: '    if (!this.leaseValid()) throw new LeaseLostError();\n',
        replace: "    // The store's fence refuses what a newer leader wrote: no local check.\n",
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'destination-error-pauses-all',
    description:
      "a destination's refusal (one topic or partition) is judged a broker outage: every destination pauses",
    file: 'lib/relay/engine/outcome.judge.ts',
    edits: [
      {
        find: "        verdict = { kind: 'destination', from: index, destination: outcome.destination, error };\n",
        replace:
          "        verdict = { kind: 'broker', from: index, error }; // retried as an outage\n",
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'one-by-one-ignores-hold',
    description:
      "the publisher's one-by-one path (after a record error) goes on with an aggregate's later events after one of them failed: they overtake it",
    file: 'lib/publisher/kafka/kafka.publisher.ts',
    edits: [
      {
        find:
          '        const outcome = outcomes[entry.index];\n' +
          "        if (outcome.status === 'retriable') held.set(aggregate, outcome);\n",
        replace: '',
      },
    ],
    checks: [{ jest: ['lib/publisher/kafka/kafka.publisher.spec.ts'] }, 'simulation'],
  },
  {
    id: 'catch-up-without-reservation',
    description:
      'a catch-up read takes a page of batchSize events without reserving room in the in-flight budget first',
    file: 'lib/relay/engine/catchup.reader.ts',
    edits: [
      {
        find: '    const reservation = await budget.reserve(budget.pageBesideIdle(batchSize));\n',
        replace: '    const reservation: Reservation = { events: batchSize };\n',
      },
    ],
    checks: ['simulation'],
  },
  // ------------------------------------------------------------ found by issue 19's proofs, then fixed
  {
    id: 'reads-in-flight-not-in-bytes',
    description:
      'the bytes room counts only the bytes held, not what the reads in flight will bring: catch-up pages started together each get the whole room',
    file: 'lib/relay/engine/in-flight.budget.ts',
    edits: [
      {
        find: '    return this.heldBytes + this.reservedEvents * this.averageBytes;\n',
        replace: '    return this.heldBytes;\n',
      },
    ],
    checks: [{ jest: ['lib/relay/engine/in-flight.budget.spec.ts'] }, 'simulation'],
  },
  {
    id: 'reread-before-failure-record',
    description:
      'a refused event is read again when its retry is due, whether or not its failure record has landed: a slow record lets the same attempt be published twice',
    file: 'lib/relay/engine/outcome.applier.ts',
    edits: [
      {
        find:
          '        // finds the event pending without it, and publishes it again as the same attempt.\n' +
          '        lane.busy = true;\n',
        replace:
          '        // finds the event pending without it, and publishes it again as the same attempt.\n',
      },
    ],
    checks: [{ jest: ['lib/relay/engine/relay.engine.spec.ts'] }, 'simulation'],
  },
  {
    id: 'waiting-probe-kept',
    description:
      "a lane that starts waiting for another held destination stays the probe of its first hold: a topic hold and a partition hold set by one publish wait for each other's probe forever",
    file: 'lib/relay/engine/destination.holds.ts',
    edits: [
      {
        find:
          '    for (const other of this.holds.values()) {\n' +
          '      if (other.probe === lane) other.probe = undefined;\n' +
          '    }\n',
        replace: '    if (hold.probe === lane) hold.probe = undefined;\n',
      },
    ],
    // Not 'simulation' alone: since the idle stream reads a page (401a23f), the saved finding
    // topic-hold-and-partition-hold-set-by-one-publish-never-released no longer sets both holds
    // in one publish, and no generated schedule of the sets reaches that state either.
    checks: [
      {
        jest: [
          'lib/relay/engine/destination.holds.spec.ts',
          'lib/relay/engine/relay.engine.spec.ts',
        ],
      },
      'simulation',
    ],
  },
  // ------------------------------------------------------------ issue 22: scheduled events
  {
    id: 'stream-takes-scheduled',
    description:
      'the change stream path takes scheduled events like any other (their availableAt is not looked at): they are published as soon as they are committed, before they are due',
    file: 'lib/relay/stream/change-stream.follower.ts',
    edits: [
      {
        find: '      if (availableAt === undefined || availableAt === null) {\n',
        replace:
          "      if (availableAt === undefined || availableAt === null || change.event.eventId !== '') {\n",
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'catch-up-ignores-due-time',
    description:
      "catch-up reads do not pass the due reader's server time: an aggregate read from the collection (a failure, a hold, a due event) brings its scheduled events not yet due, which are published early",
    file: 'lib/relay/engine/catchup.reader.ts',
    edits: [
      {
        find: 'findPendingOfAggregates(refs, reservation.events, deps.dueBy());',
        replace: 'findPendingOfAggregates(refs, reservation.events);',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'due-reader-one-pass',
    description:
      'the due reader does not set its timer again after a pass: scheduled events that come due later are published only by a later term, or never',
    file: 'lib/relay/scheduled/due.reader.ts',
    edits: [
      {
        find: '    this.fireIn(wait);\n',
        replace: '    void wait; // the stream notes the next due times\n',
      },
    ],
    checks: ['simulation'],
  },
  // ------------------------------------------------------------ issue 31: the due path on mongod's clock
  {
    id: 'due-by-extrapolated',
    description:
      'the due reader extrapolates the due time past what the server reported (the majority time read last + the time since on this machine): a cancellation committed before the due time but still replicating is not seen, and the event goes out',
    file: 'lib/relay/scheduled/due.reader.ts',
    edits: [
      {
        find: '    return new Date(this.majorityAt);\n',
        replace:
          '    return new Date(this.majorityAt + (this.deps.clock.monotonic() - this.majorityAtMonotonic));\n',
      },
    ],
    // The scheduled family caught it at run 625 of 1000 before its heavy and shared-aggregate
    // plans (issue 31), then no run of it did (the full run of 2026-12-06). The reader's spec
    // first: the simulation check runs the other sets before due-lag (100 of its 100 runs fail).
    checks: [{ jest: ['lib/relay/scheduled/due.reader.spec.ts'] }, 'simulation'],
  },
  {
    id: 'due-by-primary-clock',
    description:
      "the due reader reads the primary's local time (hello.localTime), not the majority time: a cancellation committed just before the due time but not yet majority-committed is not seen by the reads that publish the event",
    file: 'lib/relay/scheduled/due.reader.ts',
    edits: [
      {
        find: '    let majorityNow = await outbox.majorityTime();\n',
        replace:
          '    let majorityNow = await (outbox as unknown as { serverTime(): Promise<Date> }).serverTime();\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'majority-write-time-unbounded',
    description:
      "the due reader's majority write has no wtimeout: without a majority, its pass (and a stop waiting for it) waits with no end",
    file: 'lib/relay/mongo/relay-collections.ts',
    edits: [
      {
        find: "writeConcern: { w: 'majority', wtimeoutMS: MAJORITY_WRITE_TIME_WTIMEOUT_MS }",
        replace: "writeConcern: { w: 'majority' }",
      },
    ],
    checks: [{ jest: ['lib/relay/mongo/relay-collections.spec.ts'] }],
  },
  {
    id: 'id-after-ignored',
    description:
      "an event that waits for its aggregate's scheduled events keeps its own fresh _id: written by another app process in the same second, it may sort, and be read and published, before the event it waits for",
    file: 'lib/events/schedule/id-after.ts',
    edits: [
      {
        find: '  if (compareIds(fresh, last) > 0) return fresh;\n',
        replace: '  if (compareIds(fresh, last) > 0 || fresh.id.length > 0) return fresh;\n',
      },
    ],
    checks: ['simulation'],
  },
  // ------------------------------------------------------------ caught before issue 19
  {
    id: 'settle-before-ack',
    description:
      'an offered event is settled (its change may be checkpointed) as soon as it is queued, before the broker acknowledged it',
    file: 'lib/relay/engine/relay.engine.ts',
    edits: [
      {
        find: '      const item = laneItem(event, id, this.sizeOf(event), [settle]);\n',
        replace:
          '      settle(); // queued in its lane: the engine has it now\n' +
          '      const item = laneItem(event, id, this.sizeOf(event), []);\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'mark-before-send',
    description:
      'a batch is marked published before it is sent (so that a crash after the send cannot publish it twice): a crash or failure in between loses it',
    file: 'lib/relay/engine/relay.engine.ts',
    edits: [
      {
        find: '      outcomes = await this.deps.publisher.publish(events, {\n',
        replace:
          '      await this.deps.writes.markPublished(\n' +
          '        events.map((event) => event._id),\n' +
          '        new Date(this.deps.now()),\n' +
          '      );\n' +
          '      outcomes = await this.deps.publisher.publish(events, {\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'unfenced-marks',
    description:
      "published marks are written without the term's fence (a published mark looks final): a deposed leader's mark lands on a newer leader's document",
    file: 'lib/relay/term/fenced.writes.ts',
    edits: [
      {
        find: '    return this.send(() => this.store.markPublished(ids, at, this.fence));\n',
        replace:
          '    return this.send(() => this.store.markPublished(ids, at, null)); // published is final\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'checkpoint-without-lease',
    description:
      'the checkpoint is saved without checking the local lease validity (the state store fences it anyway)',
    file: 'lib/relay/stream/checkpointer.ts',
    edits: [
      {
        find: '    if (!due || !this.deps.leaseValid()) return Promise.resolve();\n',
        replace: '    if (!due) return Promise.resolve(); // the state store fences the save\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'stream-errors-ignored',
    description:
      'a transient change-stream error ends following (the sweep is relied on to publish), without saying so or reopening the stream',
    file: 'lib/relay/stream/change-stream.follower.ts',
    edits: [
      {
        find: "        failures++;\n        this.streamState = 'retrying';\n",
        replace:
          '        if (error instanceof ChangeSourceError) break; // the sweep publishes meanwhile\n' +
          "        failures++;\n        this.streamState = 'retrying';\n",
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'local-clock-lease',
    description:
      "the lease's times (acquired at, expires at) come from this process's wall clock instead of the database server's",
    file: 'lib/relay/lease/lease.keeper.ts',
    edits: [
      {
        find: '    const serverNow = await this.syncServerTime();\n',
        replace: '    await this.syncServerTime();\n    const serverNow = this.clock.now();\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'tracker-passes-unsettled',
    description:
      'the checkpoint tracker moves its safe position over every tracked change, settled or not',
    file: 'lib/relay/stream/checkpoint.tracker.ts',
    edits: [{ find: '      if (!head?.settled) break;\n', replace: '      if (!head) break;\n' }],
    checks: ['simulation'],
  },
  // ------------------------------------------------------------ issue 30: the Kafka clients
  {
    id: 'idempotent-no-producer-reset',
    description:
      'after an idempotent send failed (an answer lost, a deadline passed), the next send goes out on the same producer: the client rolled its sequence back, and a batch of the same record count is answered as a duplicate of the stored one, reported published without being in Kafka',
    file: 'lib/publisher/kafka/idempotent.sends.ts',
    edits: [
      {
        find: '    await this.inner.replaceProducer().catch(() => undefined);\n',
        replace: '',
      },
    ],
    checks: [{ jest: ['lib/publisher/kafka/idempotent-sends.spec.ts'] }, 'simulation'],
  },
  {
    id: 'client-partitioner-used',
    description:
      "the publisher hands its messages to the client without the partition it chose: the client picks one (@platformatic/kafka with a partitioner that is not Kafka's), an aggregate's events may land on another partition than its earlier ones and than the relay counts them on",
    file: 'lib/publisher/kafka/kafka.publisher.ts',
    edits: [
      {
        find: '  prepared.sent = { key, value, headers, partition };\n',
        replace: '  prepared.sent = { key, value, headers } as PartitionedMessage;\n',
      },
    ],
    checks: [{ jest: ['lib/publisher/kafka/auto-created-topic.spec.ts'] }],
  },
  {
    id: 'classifier-first-attempt',
    description:
      "the final answer of a retried @platformatic/kafka send is read from its first attempt: the same broker answers are classified unlike kafkajs' (a CORRUPT_MESSAGE then network errors dead-letter at once)",
    file: 'lib/publisher/platformatic/platformatic-kafka.errors.ts',
    edits: [
      {
        find: '  const last = tried.at(-1) ?? errors.at(-1);\n',
        replace: '  const last = tried.at(0) ?? errors.at(0);\n',
      },
    ],
    checks: [{ jest: ['lib/publisher/kafka/kafka-error.clients.spec.ts'] }],
  },
  {
    id: 'grown-topic-keeps-producer',
    description:
      "the publisher keeps its producer when a topic's partition count grows: kafkajs' cached metadata (5 minutes) leaves the new partitions out of its requests",
    file: 'lib/publisher/kafka/partition.counts.ts',
    edits: [
      {
        find: '          if (count > before) await this.sender.replaceProducer();\n',
        replace: '',
      },
    ],
    checks: [{ jest: ['lib/publisher/kafka/partition.counts.spec.ts'] }],
  },
  // ------------------------------------------------------------ issue 35: classes no schedule caught
  {
    id: 'drain-reads-before-stamping',
    description:
      "a partition's drain reads its pending events without first stamping the slots of events written before slots: an aggregate's older unslotted events are missed, its later slotted ones go out first",
    file: 'lib/relay/recovery/collection.drain.ts',
    edits: [
      {
        find: '    await stampSlotsBeforeRangeReads(this.outbox, active);\n',
        replace:
          '    void stampSlotsBeforeRangeReads; // partition 0 stamps them in the background\n',
      },
    ],
    // No schedule reached it (issue 35: 0 of 60 pre-slot-retries runs); the recovery spec does.
    checks: [{ jest: ['lib/relay/recovery/stamp-before-reads.spec.ts'] }, 'simulation'],
  },
  {
    id: 'retrying-loader-before-stamping',
    description:
      "a partition's term start reads the aggregates waiting for a retry without first stamping missing slots: one whose marked events have no slot is not held, the stream publishes its later events first",
    file: 'lib/relay/recovery/retrying-aggregates.loader.ts',
    edits: [
      {
        find: '  await stampSlotsBeforeRangeReads(outbox, active);\n',
        replace:
          '  void stampSlotsBeforeRangeReads; // partition 0 stamps them in the background\n',
      },
    ],
    // No schedule reached it (issue 35: 0 of 60 pre-slot-retries runs); the recovery spec does.
    checks: [{ jest: ['lib/relay/recovery/stamp-before-reads.spec.ts'] }, 'simulation'],
  },
  {
    id: 'lease-tick-ignores-ending-term',
    description:
      "the relay node's lease tick does not wait for a term that is ending: it acquires again and starts a new term while the old one still settles",
    file: 'lib/relay/relay.node.ts',
    edits: [
      {
        find: '    if (!this.running) return;\n    await this.ending;\n',
        replace: '    if (!this.running) return;\n',
      },
    ],
    // No schedule reached it (issue 35: 0 of 150 lease-pressure runs); the node's spec does.
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'blocked-events-queued-live',
    description:
      "an event the stream brings for an aggregate that waits (its retry, a held destination) is queued in its lane as if live instead of left pending with a marker: it goes out before the aggregate's older pending events",
    file: 'lib/relay/engine/relay.engine.ts',
    edits: [
      {
        find: "      if (lane.mode !== 'live') {\n        if (lane.mode === 'catchup') lane.more = true;\n",
        replace: "      if (lane.mode === 'catchup') {\n        lane.more = true;\n",
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'send-without-lease-check-at-send',
    description:
      'the engine does not hand the publisher the lease check read right before each send (the abandon at close stays): a batch taken while the lease was valid is sent after it ran out',
    file: 'lib/relay/engine/relay.engine.ts',
    edits: [{ find: '        mayStillSend: this.deps.leaseValid,\n', replace: '' }],
    // The spec first: the lease-pressure family catches it in 55 of its 300 runs (issue 35).
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'stop-refuses-writes-at-once',
    description:
      "a graceful stop refuses the term's writes as soon as it begins: what the broker acknowledged during the stop is not marked, and the next leader publishes it again",
    file: 'lib/relay/term/relay.term.ts',
    edits: [
      {
        find: '    const leaseWasValid = this.active && this.lease.isValid();\n    this.stopTakingWork();\n',
        replace:
          '    const leaseWasValid = this.active && this.lease.isValid();\n    this.stopTakingWork();\n    this.settling = false; // no writes once stopping\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'release-before-settling',
    description:
      'a graceful stop releases the lease before the term settled what is under way: the next leader takes over while publishes are in flight and their marks are refused',
    file: 'lib/relay/relay.node.ts',
    edits: [
      {
        find: '        finished = await term.end(timeoutMs);\n',
        replace:
          '        if (release) await this.lease.release().catch(() => undefined); // hand over at once\n' +
          '        finished = await term.end(timeoutMs);\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'term-start-skips-retrying',
    description:
      'a term starts without reading the aggregates waiting for a retry: the stream publishes their newer events before the older ones that failed',
    file: 'lib/relay/term/relay.term.ts',
    edits: [
      {
        find: '      const retrying = await loadRetryingAggregates(outbox, this.engine, activeNow);\n',
        replace:
          '      const retrying = 0 * Number(Boolean(loadRetryingAggregates)); // the sweep finds them\n',
      },
    ],
    // The spec first: the simulation check runs the other sets before retry-takeover (96 of its
    // 100 runs fail, the first at run 1); lease-pressure's take-overs during a refusal reach it
    // in 14 of its 500 runs, pre-slot-retries in 1 of 60 (issue 35, CONTRIBUTING.md).
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'no-lease-watchdog',
    description:
      'the relay node arms no watchdog: a term whose renewal does not land in time goes on after its lease ran out, until a later tick notices',
    file: 'lib/relay/relay.node.ts',
    edits: [
      {
        find: '    this.watchdog?.cancel();\n    if (!this.term || !this.options.lease.enabled) return;\n',
        replace:
          '    this.watchdog?.cancel();\n    if (this.term || !this.term) return; // the next tick notices a lapse\n',
      },
    ],
    // No schedule reached it (issue 35: 0 of 150 lease-pressure runs); the node's spec does.
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'stop-without-renewal',
    description:
      'a graceful stop does not renew the lease while it settles: with shutdownTimeoutMs longer than the lease, what the broker acknowledged late is not marked under a valid lease',
    file: 'lib/relay/relay.node.ts',
    edits: [
      {
        find: '      const renewal = release ? this.renewWhileEnding() : undefined;\n',
        replace:
          '      const renewal = undefined as RelayJob | undefined; // the term ends within the lease\n',
      },
    ],
    // The spec first: the lease-pressure family catches it in 33 of its 300 runs (issue 35).
    checks: [{ jest: ['lib/relay/relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'page-drops-older-unslotted',
    description:
      "a partition's drain page leaves out the events without a slot of its aggregates that come before the page's: a later slotted event goes out before an older unslotted one",
    file: 'lib/relay/ports/unslotted-in-page.ts',
    edits: [
      {
        find: '  if (unslotted.length === 0) return slotted;\n',
        replace: '  if (unslotted.length >= 0) return slotted; // the stream brings the others\n',
      },
    ],
    // No schedule reaches it (issue 35: 0 of 60 pre-slot-retries runs); the page's own spec does.
    checks: [{ jest: ['lib/relay/ports/unslotted-in-page.spec.ts'] }, 'simulation'],
  },
  {
    id: 'hand-over-forgets-at-once',
    description:
      'a partition handed over is forgotten as soon as its stop begins: the instance may take it again while its old relay still stops',
    file: 'lib/relay/partitions/partitioned-relay.node.ts',
    edits: [
      {
        find: '    this.track(relay.stop().finally(() => this.forget(partition, relay)));\n',
        replace: '    this.forget(partition, relay);\n    this.track(relay.stop());\n',
      },
    ],
    // No schedule reached it (issue 35: 0 of 40 hand-over runs); the node's spec does.
    checks: [{ jest: ['lib/relay/partitions/partitioned-relay.node.spec.ts'] }, 'simulation'],
  },
  {
    id: 'hand-over-releases-after-abandon',
    description:
      "a partition's relay releases its lease also after it abandoned publishes at the stop: the next owner publishes while the abandoned sends may still land",
    file: 'lib/relay/partitions/partition.relay.ts',
    edits: [{ find: '        keepLeaseAfterAbandon: true,\n', replace: '' }],
    // No schedule reached it (issue 35: 0 of 40 hand-over runs); the partition relay's spec does.
    checks: [{ jest: ['lib/relay/partitions/partition.relay.spec.ts'] }, 'simulation'],
  },

  // ------------------------------------------------------------ issue 33: tenants
  {
    id: 'tenants-listed-at-start-only',
    description:
      'the tenants relay follows only the databases listed at its first read: a tenant added while it runs is never followed (its events stay pending)',
    file: 'lib/relay/tenants/tenants.term.ts',
    edits: [
      {
        find: '    const listed = new Set(wanted);\n    this.listed = listed;\n    const added = wanted.filter(\n',
        replace:
          '    const first = this.listed.size === 0;\n    const listed = new Set(wanted);\n    this.listed = listed;\n    const added = (first ? wanted : []).filter(\n',
      },
    ],
    checks: ['simulation'],
  },
  {
    id: 'cluster-hub-ends-while-wanted',
    description:
      "the cluster-wide stream's loop ends although a database subscribed while it closed its cursor: that database's changes are never read (only the sweep finds its events)",
    file: 'lib/relay/tenants/cluster-stream.hub.ts',
    edits: [
      { find: '    } while (this.wanted());', replace: '    } while (false);' },
      { find: '      if (this.wanted()) this.startLoop();\n', replace: '' },
    ],
    checks: [{ jest: ['lib/relay/tenants/cluster-stream.hub.spec.ts'] }, 'simulation'],
  },
  {
    id: 'stream-keeps-foreign-namespaces',
    description:
      "a change stream keeps whatever insert the server sends: where the server's filter lets other collections through, their documents are taken for events (or fail a partition's stream on their slot, at every reopening)",
    file: 'lib/relay/mongo/mongo-change.source.ts',
    edits: [
      {
        find: '    if (!this.scope.follows(change.ns)) return;\n',
        replace: '',
      },
    ],
    checks: [{ jest: ['lib/relay/mongo/mongo-change.source.spec.ts'] }],
  },
];

/** How often `find` occurs in `text` (non-overlapping). */
export function occurrences(text: string, find: string): number {
  if (find.length === 0) return 0;
  let count = 0;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) count++;
  return count;
}

/**
 * `text` with the mutation's edits applied, or the reason it cannot be: an anchor found zero or
 * several times (the code moved: update the list), or an edit that changes nothing.
 */
export function applyEdits(
  mutation: Mutation,
  text: string,
): { text: string } | { broken: string } {
  let current = text;
  for (const [index, edit] of mutation.edits.entries()) {
    const found = occurrences(current, edit.find);
    if (found !== 1) {
      return {
        broken: `edit ${index + 1}: its anchor occurs ${found} times in ${mutation.file} (must be exactly once; update scripts/mutations/mutations.ts)`,
      };
    }
    if (edit.find === edit.replace) return { broken: `edit ${index + 1} changes nothing` };
    const at = current.indexOf(edit.find);
    current = current.slice(0, at) + edit.replace + current.slice(at + edit.find.length);
  }
  return { text: current };
}
