import { eventMemoryBytes } from '../../../lib/relay/engine/event-memory';
import { partitionOfSlot } from '../../../lib/relay/ports/partition-layout';
import { partitionScope, SINGLE_SCOPE } from '../mongo/sim-database';
import type { CommitFact, PortFlowFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/** What one relay incarnation holds, as its ports saw it. */
interface Held {
  /** docId → bytes in memory (`eventMemoryBytes` of its bytes on the wire, as the relay charges it). */
  events: Map<string, number>;
  /** Held events that were read with a retry marker (the relay may drop those without a write). */
  marked: Set<string>;
  bytes: number;
  /**
   * Destinations whose last answer to this incarnation refused events (the relay holds them
   * back): a topic, or `topic#p` when the broker refused one partition of it.
   */
  refused: Set<string>;
  /** Events this incarnation got out (a send answered ok, or its published mark issued). */
  out: Set<string>;
  /** docId → the fencing number of the lease (its scope's) the incarnation held when it was read. */
  under: Map<string, number>;
}

/**
 * (d) Memory, measured at the simulated ports, never asked of the relay. An outbox event is
 * held by a relay incarnation from the moment a read answers it to that incarnation (a change
 * stream batch, a drain page, a catch-up page of one aggregate: `history.portFlow`) until it
 * is settled: the pending-state check of a stream batch answers it is no longer pending, or
 * pending with a retry marker (its aggregate is then read from the collection), or fails (the
 * batch is dropped and read again), a Kafka send carrying it is answered without an error, or the incarnation
 * issues a write that settles it (marked published, held back with a marker, failure
 * recorded, marked dead), or the incarnation ends (crash, exit, or a graceful stop begins:
 * what is queued then stays pending, unwritten) or loses, by the server's
 * clock, the lease under which it read the event (the single lease, or the event's partition
 * lease in the layout now): a term that ends abandons what it held. Not held: an event it
 * already got out and reads again before the mark lands, an event of a drain page with a retry
 * marker (its aggregate is read again from the collection), and in a
 * catch-up page the events from the first one not yet due on the reader's clock on (the page
 * stops there). An event read with a retry marker may be left in the collection again without
 * a write (its marker stands) when its destination must wait: such an event is not counted
 * while its destination is refused to that incarnation, and is released when it is refused. A
 * destination is its topic (the last answer about the topic, a send or its metadata, refused
 * it) or its Kafka partition (the partition of its aggregate id's key, refused by a partition's
 * own error: leader or replicas unavailable, or an acknowledgement that timed out, appended or
 * not: the relay is told it failed); a send answered ok frees the topic and the
 * partitions of its events, not the topic's other partitions (the relay's holds are the same:
 * a partition that failed stays held while the others of its topic publish). The same event
 * handed twice is held once.
 *
 * After every step, each live incarnation holds at most `maxInFlight` events (the relay
 * reserves room before every read) and at most `maxInFlightBytes` + `batchSize` x the largest
 * event committed so far, in bytes of memory: each event counts what it costs in memory held
 * (`eventMemoryBytes` of its size on the wire, the estimate the relay's budget charges), and a
 * read starts only below the byte bound and is sized at the average seen, so one read's worth
 * may overshoot it. A partitioned relay's
 * partitions share one budget, per process; a partition handed over leaves it at once while
 * its publishes finish, so a partitioned process may hold up to twice both bounds. With tenant
 * databases (docs/tenants.md, "Memory"), every database shares the budget, and besides it each
 * may have a page read in flight and up to `2 x batchSize` changes the cluster-wide stream read
 * for it and it did not take yet (the stream reads `batchSize` more only while none has that
 * many): a tenants process may hold `3 x batchSize` more events per tenant database (per tenant
 * database and partition with `relay.partitions` > 1: each partition's term has its own), and as many
 * largest events more in bytes. The cluster-wide stream hands the events of every database its
 * filter still names; the relay drops those of a database it does not follow, and what it held
 * of a database it lets go: so an event the stream hands while its database is not listed is
 * not held, and the held events of a database are released when the list stops naming it (the
 * relay learns it up to a sweep interval later: lenient for that long). Aggregates tracked without events
 * (waiting for a retry or a held destination) are not visible at the ports and not judged
 * here.
 *
 * Scheduled events (with `availableAt`): the relay holds nothing for one before it is due,
 * whatever the number pending. A change stream batch hands them (the stream carries every
 * insert) but they are not held: the relay must let them go at once. So, at the ports: a drain
 * or catch-up read hands a scheduled event only if it is due by the server's clock when the read
 * is served (`availableAt` <= then: the reader asked with a `dueBy` of the server's time), and
 * an incarnation sends a scheduled event only after a drain or catch-up read handed it that
 * event when due (never straight from what its stream handed: that would be per-event memory
 * kept until the due time).
 */
export class MemoryInvariant implements InvariantChecker {
  readonly id = 'd';
  readonly name = 'bounded memory';
  private samples = 0;
  private maxEvents = 0;
  private maxBytes = 0;
  private read = 0;
  private readonly held = new Map<string, Held>();
  private readonly violations: string[] = [];
  private worstEvents = 0;
  private worstBytes = 0;
  private byDoc = new Map<string, CommitFact>();
  private commitsSeen = -1;
  private largest = 0;
  /** Per incarnation: scheduled events a drain or catch-up read handed it when due. */
  private readonly dueReads = new Map<string, Set<string>>();
  private sendsRead = 0;
  private scheduledChecked = 0;
  /**
   * Per incarnation, the fencing numbers of the single lease it was granted, from when (virtual
   * ms): a read answers the term that issued it, which may have ended before the answer came.
   */
  private readonly grants = new Map<string, Array<{ from: number; fencing: number }>>();

  afterStep(world: SimWorld): void {
    this.noteGrant(world);
    const flow = world.history.portFlow;
    for (; this.read < flow.length; this.read++) this.apply(world, flow[this.read]);
    this.judgeScheduledSends(world);
    if (this.held.size === 0) return;
    this.forgetEnded(world);
    this.forgetLetGo(world);
    const options = world.schedule.options;
    // A partition handed over leaves the shared budget at once, its publishes still finishing.
    const terms = world.partitioned ? 2 : 1;
    // With partitions, a page per database beside each partition's term (its own part).
    const perDatabase =
      3 *
      options.batchSize *
      (world.schedule.world.tenants?.databases ?? 0) *
      Math.max(1, options.partitions ?? 1);
    const maxEvents = terms * options.maxInFlight + perDatabase;
    const maxBytes = terms * options.maxInFlightBytes + perDatabase * this.largest;
    for (const [owner, held] of this.held) {
      this.samples++;
      const events = held.events.size;
      this.maxEvents = Math.max(this.maxEvents, events);
      this.maxBytes = Math.max(this.maxBytes, held.bytes);
      if (events > maxEvents && events > this.worstEvents) {
        this.worstEvents = events;
        this.violations.push(
          `${world.now}: ${owner} holds ${events} events read from its ports and not settled (bound ${maxEvents}: maxInFlight ${options.maxInFlight}${terms > 1 ? ' x 2, partitioned' : ''}${perDatabase > 0 ? ` + ${perDatabase} for the tenant databases` : ''})`,
        );
      }
      const byteBound = maxBytes + options.batchSize * this.largest;
      if (held.bytes > byteBound && held.bytes > this.worstBytes) {
        this.worstBytes = held.bytes;
        this.violations.push(
          `${world.now}: ${owner} holds ${held.bytes} bytes of ${events} events read and not settled (bound ${byteBound} = ` +
            `maxInFlightBytes ${options.maxInFlightBytes}${terms > 1 ? ' x 2' : ''} + batchSize ${options.batchSize} x largest event ${this.largest})`,
        );
      }
    }
  }

  /** Notes a new grant of the single lease (`grants`). */
  private noteGrant(world: SimWorld): void {
    if (world.partitioned) return;
    const lease = world.db.scopeState(SINGLE_SCOPE).lease;
    if (!lease) return;
    const grants = this.grants.get(lease.owner) ?? [];
    if (grants.at(-1)?.fencing !== lease.fencing)
      grants.push({ from: world.now, fencing: lease.fencing });
    this.grants.set(lease.owner, grants);
  }

  /** The fencing number of the single lease `owner` was last granted by `at`, if any. */
  private grantAt(owner: string, at: number): number | undefined {
    let fencing: number | undefined;
    for (const grant of this.grants.get(owner) ?? []) if (grant.from <= at) fencing = grant.fencing;
    return fencing;
  }

  private heldBy(owner: string): Held {
    let held = this.held.get(owner);
    if (!held)
      this.held.set(
        owner,
        (held = {
          events: new Map(),
          marked: new Set(),
          refused: new Set(),
          bytes: 0,
          out: new Set(),
          under: new Map(),
        }),
      );
    return held;
  }

  private listChangesSeen = 0;

  /** Tenants: the held events of databases no longer listed (their terms drop them). */
  private forgetLetGo(world: SimWorld): void {
    const tenants = world.tenants;
    if (!tenants || tenants.listChanges === this.listChangesSeen) return;
    this.listChangesSeen = tenants.listChanges;
    for (const held of this.held.values()) {
      for (const docId of [...held.events.keys()]) {
        const database = this.commitOf(world, docId)?.database;
        if (database !== undefined && !tenants.isListed(database)) this.release(held, docId);
      }
    }
  }

  private release(held: Held, docId: string): void {
    const bytes = held.events.get(docId);
    if (bytes === undefined) return;
    held.events.delete(docId);
    held.marked.delete(docId);
    held.under.delete(docId);
    held.bytes -= bytes;
  }

  /** Whether the event's topic, or its Kafka partition, refuses it to `held`'s incarnation. */
  private refusedTo(world: SimWorld, held: Held, commit: CommitFact | undefined): boolean {
    if (commit === undefined) return false;
    return held.refused.has(commit.topic) || held.refused.has(this.partitionOf(world, commit));
  }

  /** `topic#p`: the Kafka partition the broker puts the event in (keyed by its aggregate id). */
  private partitionOf(world: SimWorld, commit: CommitFact): string {
    const id = commit.aggregate.slice(commit.aggregateType.length + 1);
    return `${commit.topic}#${world.kafka.partitionOfKey(commit.topic, id)}`;
  }

  private commitOf(world: SimWorld, docId: string): CommitFact | undefined {
    const commits = world.history.commits;
    if (this.commitsSeen !== commits.size) {
      this.byDoc = new Map();
      for (const commit of commits.values()) {
        this.byDoc.set(commit.docId, commit);
        this.largest = Math.max(this.largest, eventMemoryBytes(commit.bytes));
      }
      this.commitsSeen = commits.size;
    }
    return this.byDoc.get(docId);
  }

  private apply(world: SimWorld, fact: (typeof world.history.portFlow)[number]): void {
    const held = this.heldBy(fact.owner);
    switch (fact.kind) {
      case 'handed':
        this.noteScheduled(world, fact);
        for (const { docId, retryAt, availableAt } of fact.docs) {
          // The stream hands every insert: a scheduled one is let go at once, never held.
          if (availableAt !== undefined && fact.via === 'stream') continue;
          if (fact.via === 'catch-up') {
            if ((retryAt ?? 0) > fact.relayNow) break;
          } else if (retryAt !== undefined) continue;
          if (held.out.has(docId) || held.events.has(docId)) continue;
          const commit = this.commitOf(world, docId);
          // Tenants: the stream's changes of a database not followed are dropped at once.
          const database = fact.via === 'stream' ? commit?.database : undefined;
          if (database !== undefined && !world.tenants?.isListed(database)) continue;
          if (retryAt !== undefined && this.refusedTo(world, held, commit)) continue;
          const bytes = commit ? eventMemoryBytes(commit.bytes) : 0;
          held.events.set(docId, bytes);
          held.bytes += bytes;
          // Read for the term that issued the read (single lease): see `forgetOlderTerms`.
          const issuedUnder = world.partitioned
            ? undefined
            : this.grantAt(fact.owner, fact.issuedAt);
          if (issuedUnder !== undefined) held.under.set(docId, issuedUnder);
          if (retryAt !== undefined) held.marked.add(docId);
        }
        break;
      case 'states': {
        const pending = new Map(fact.pending.map((state) => [state.docId, state.retryAt]));
        for (const docId of fact.asked) {
          if (!pending.has(docId) || pending.get(docId) !== undefined) this.release(held, docId);
        }
        break;
      }
      case 'published':
        for (const eventId of fact.eventIds) {
          const commit = world.history.commits.get(eventId);
          if (commit === undefined) continue;
          const docId = commit.docId;
          // Accepted by its topic and its partition: neither refuses it now.
          held.refused.delete(commit.topic);
          held.refused.delete(this.partitionOf(world, commit));
          held.out.add(docId);
          this.release(held, docId);
        }
        break;
      case 'failed': {
        for (const destination of fact.refused) held.refused.add(destination);
        for (const docId of [...held.marked]) {
          if (this.refusedTo(world, held, this.commitOf(world, docId))) this.release(held, docId);
        }
        break;
      }
      case 'written':
        for (const docId of fact.docIds) {
          if (fact.name === 'markPublished' || fact.name === 'markDead') held.out.add(docId);
          this.release(held, docId);
        }
        break;
    }
  }

  /** A drain or catch-up read hands scheduled events only when due; remembers them for the sends. */
  private noteScheduled(world: SimWorld, fact: Extract<PortFlowFact, { kind: 'handed' }>): void {
    if (fact.via === 'stream') return;
    for (const { docId, availableAt } of fact.docs) {
      if (availableAt === undefined) continue;
      this.scheduledChecked++;
      if (availableAt > fact.servedAt) {
        this.violations.push(
          `${fact.servedAt}: a ${fact.via} read of ${fact.owner} handed ${this.commitOf(world, docId)?.eventId ?? docId}, ` +
            `scheduled for ${availableAt}, before it was due by the server's clock`,
        );
        continue;
      }
      const due = this.dueReads.get(fact.owner) ?? new Set<string>();
      due.add(docId);
      this.dueReads.set(fact.owner, due);
    }
  }

  /** Every scheduled event a send carries was handed to its sender by a read when due. */
  private judgeScheduledSends(world: SimWorld): void {
    const calls = world.history.sendCalls;
    for (; this.sendsRead < calls.length; this.sendsRead++) {
      const call = calls[this.sendsRead];
      for (const eventId of call.eventIds) {
        const commit = world.history.commits.get(eventId);
        if (commit?.availableAt === undefined) continue;
        this.scheduledChecked++;
        if (this.dueReads.get(call.owner)?.has(commit.docId)) continue;
        this.violations.push(
          `${call.issuedAt}: ${call.owner} sent the scheduled ${eventId} (due at ${commit.availableAt}) ` +
            `though no drain or catch-up read handed it to it when due: it kept it from its stream`,
        );
      }
    }
  }

  /**
   * Incarnations that ended, and events whose lease their holder no longer has, or holds under
   * another fencing number than when it read them. The last: the relay may end a term on its
   * own view of the lease (its watchdog counts the validity from when it asked, so it may end
   * well before the server's expiry: a slow renewal) and take the lease again while the server
   * still counts the old grant valid, with a new fencing number; the server never saw the lease
   * lapse, but the old term was thrown away with what it held (its engine closed, its budget
   * share given back; the new term begins only after that) and the new term starts empty.
   */
  private forgetEnded(world: SimWorld): void {
    const live = new Set<string>();
    // A relay that stops gracefully drops what it queued (it stays pending) without a write.
    for (const node of world.nodes)
      if (node.owner && node.process.isAlive && !node.leaving && !node.stopped)
        live.add(node.owner);
    const layout = world.db.layout;
    for (const [owner, held] of this.held) {
      if (!live.has(owner)) {
        this.held.delete(owner);
        continue;
      }
      if (held.events.size === 0) continue;
      if (!layout || layout.partitions <= 1) {
        if (!world.db.holdsLease(owner, undefined, world.partitioned ? 'any' : undefined)) {
          held.events.clear();
          held.marked.clear();
          held.under.clear();
          held.bytes = 0;
        } else if (!world.partitioned) {
          this.forgetOlderTerms(world, held, () => SINGLE_SCOPE);
        }
        continue;
      }
      const scopeOf = (docId: string): string | undefined => {
        const slot = this.commitOf(world, docId)?.aggregateSlot;
        return slot === undefined
          ? undefined
          : partitionScope(layout, partitionOfSlot(slot, layout.partitions));
      };
      for (const docId of [...held.events.keys()]) {
        const scope = scopeOf(docId);
        if (scope !== undefined && !world.db.holdsLease(owner, undefined, scope))
          this.release(held, docId);
      }
      this.forgetOlderTerms(world, held, scopeOf);
    }
  }

  /**
   * Releases the events `held` read under an older fencing number of their lease's scope than
   * the one its incarnation holds now (a term of its own ended in between); notes the current
   * one for events not seen here yet (read in this step). A read of the single lease counts for
   * the grant its incarnation had when it issued the read: a stream read issued by a term that
   * ended while the read was on its way (a pause, then the watchdog) is answered after the next
   * term began, and is that next term's no more than the old term's engine is.
   */
  private forgetOlderTerms(
    world: SimWorld,
    held: Held,
    scopeOf: (docId: string) => string | undefined,
  ): void {
    for (const docId of [...held.events.keys()]) {
      const scope = scopeOf(docId);
      if (scope === undefined) continue;
      const fencing = world.db.scopeState(scope).lease?.fencing;
      if (fencing === undefined) continue;
      const readUnder = held.under.get(docId);
      if (readUnder === undefined) held.under.set(docId, fencing);
      else if (readUnder !== fencing) this.release(held, docId);
    }
  }

  finish(): InvariantResult {
    return {
      id: this.id,
      name: this.name,
      checked: this.samples,
      violations: capped(this.violations),
      counts: {
        'max events held (observed)': this.maxEvents,
        'max bytes held (observed)': this.maxBytes,
        'scheduled events handed or sent, checked due': this.scheduledChecked,
      },
    };
  }
}
