import type { RelayFence } from '../../../lib/relay/ports/outbox-relay.store';
import type { SimRandom } from '../core/sim.random';
import type { SimScheduler } from '../core/sim.scheduler';
import type { SimProcess } from '../process/sim-process';
import type { ActiveFaults } from '../schedule/active-faults';
import type { SimHistory, StoreOpFact } from '../world/sim.history';
import type { SimDatabase } from './sim-database';
import { mongoErrors } from './sim-mongo.error';

export interface DbOpSpec {
  name: string;
  /** Writes relay state or outbox documents (the fencing invariant looks at these). */
  write: boolean;
  /** Lease operations themselves are not "writes under a lease". */
  leaseOp?: boolean;
  fence?: RelayFence;
  ids?: readonly unknown[];
  /** The lease the write is made under (default the single relay lease; a partition's scope). */
  leaseScope?: string;
  /** Observation only: called with a successful answer as it reaches the caller (no extra tick). */
  onAnswer?: (value: never) => void;
  /** Observation only: called when an error answer reaches the caller. */
  onFailure?: () => void;
}

/** What the server answers: a value, or an error (and whether the operation was applied). */
export type DbAnswer<T> = { ok: true; value: T } | { ok: false; error: Error; applied: boolean };

/** Never settles: a call of a process that is dead (or died at this call). */
const NEVER = new Promise<never>(() => undefined);

/**
 * One process's connection to the simulated database: every call is issued at the process's
 * time, reaches the server after a network delay (unless it fails before), is applied there,
 * and is answered after another delay, through the process (dropped if it crashed meanwhile,
 * held while it is paused). Faults: errors before or after apply, slow calls, elections.
 */
export class SimMongoConnection {
  constructor(
    private readonly scheduler: SimScheduler,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
    private readonly faults: ActiveFaults,
    private readonly process: SimProcess,
    private readonly random: SimRandom,
    private readonly baseLatencyMs: number,
    readonly owner: string,
  ) {}

  /** Virtual time now (the server's clock). */
  now(): number {
    return this.scheduler.now;
  }

  /** The calling process's wall clock now (what the relay's `now()` returns), for observations. */
  callerNow(): number {
    return this.process.clock().now();
  }

  /** A call whose server side answers at once with what `apply` returns (or throws). */
  op<T>(spec: DbOpSpec, apply: (fact: StoreOpFact) => T): Promise<T> {
    return this.request(spec, (respond, fact) => {
      try {
        respond({ ok: true, value: apply(fact) });
      } catch (error) {
        respond({ ok: false, error: error as Error, applied: false });
      }
    });
  }

  /** A call whose server side answers through `respond`, maybe later (a change stream's wait). */
  request<T>(
    spec: DbOpSpec,
    serve: (respond: (answer: DbAnswer<T>) => void, fact: StoreOpFact) => void,
  ): Promise<T> {
    const decision = this.process.portCall();
    if (!decision.proceed) return NEVER;
    const now = this.scheduler.now;
    const incarnation = this.process.incarnation;
    const fact: StoreOpFact = {
      opId: this.history.storeOps.length + 1,
      node: this.process.name,
      owner: this.owner,
      name: spec.name,
      issuedAt: now,
      write: spec.write,
    };
    if (spec.fence !== undefined) fact.fence = spec.fence;
    if (spec.ids) fact.ids = spec.ids.map(String);
    if (spec.leaseScope !== undefined) fact.scope = spec.leaseScope;
    if (spec.write && !spec.leaseOp)
      fact.issuedWithoutLease = !this.db.holdsLease(this.owner, undefined, spec.leaseScope);
    this.history.storeOps.push(fact);
    const failBefore = this.random.chance(this.faults.maxParam('db-transient-before', now) / 100);
    const failAfter = this.random.chance(this.faults.maxParam('db-transient-after', now) / 100);
    // MaxTimeMSExpired on a store operation (not the change stream's cursor): the server gave up
    // on it, having applied it or not (an update may have been cut short after its write).
    const timeout =
      !spec.name.startsWith('cursor.') &&
      spec.name !== 'watch' &&
      this.random.chance(this.faults.maxParam('db-timeout', now) / 100);
    const timeoutApplied = timeout && this.random.chance(0.5);
    const outbound = this.latency(now);
    const promise = new Promise<T>((resolve, reject) => {
      const respond = (answer: DbAnswer<T>): void => {
        fact.appliedAt = this.scheduler.now;
        if (spec.write && answer.ok) this.db.noteMajorityWrite();
        let final = answer;
        if (answer.ok && failAfter) {
          final = { ok: false, error: mongoErrors.network(), applied: true };
          this.history.countEffect('db-transient-after');
        }
        fact.outcome = final.ok ? 'ok' : final.applied ? 'failed-after' : 'failed-before';
        fact.answered = false;
        this.process.deliverAt(
          this.scheduler.now + this.latency(this.scheduler.now),
          `db answer ${spec.name}#${fact.opId}`,
          () => {
            fact.answered = true;
            fact.answeredAt = this.scheduler.now;
            if (final.ok) spec.onAnswer?.(final.value as never);
            else spec.onFailure?.();
            if (final.ok) resolve(final.value);
            else reject(final.error);
          },
          undefined,
          incarnation,
        );
      };
      this.scheduler.at(now + outbound, 'db', `${spec.name}#${fact.opId} from ${fact.node}`, () => {
        if (this.db.electionActive()) {
          respond({ ok: false, error: mongoErrors.notPrimary(), applied: false });
          return;
        }
        if (failBefore) {
          this.history.countEffect('db-transient-before');
          respond({ ok: false, error: mongoErrors.network(), applied: false });
          return;
        }
        if (timeout) {
          this.history.countEffect('db-timeout');
          if (!timeoutApplied) {
            respond({ ok: false, error: mongoErrors.timeout(), applied: false });
            return;
          }
          serve(() => respond({ ok: false, error: mongoErrors.timeout(), applied: true }), fact);
          return;
        }
        serve(respond, fact);
      });
    });
    if (decision.crashAfter) this.process.crash(`right after issuing ${spec.name}`);
    return promise;
  }

  private latency(now: number): number {
    const slow = this.faults.maxParam('db-slow', now);
    if (slow > 0) this.history.countEffect('db-slow');
    return this.random.int(1, Math.max(1, this.baseLatencyMs * 2)) + slow;
  }
}
