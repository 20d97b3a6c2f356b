import { InMemoryRelayStateStore } from '../../testing/relay/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedChangeSource } from '../../testing/relay/scripted-change.source';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type {
  PartitionLease,
  PartitionScope,
  RelayLayout,
  RelayMember,
  RelayMembershipStore,
  RelayPartitionPorts,
} from '../ports/relay-partitions.store';
import { OutboxRelayMetrics } from '../relay.metrics';
import { resolveRelayOptions } from '../relay.options';
import { PartitionedRelayNode } from './partitioned-relay.node';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };

/** The partition ports in memory (no events: these specs look at who holds what). */
class MemoryPartitions implements RelayPartitionPorts, RelayMembershipStore {
  readonly counter = { next: 0 };
  readonly single = new InMemoryRelayStateStore(this.counter);
  readonly states = new Map<string, InMemoryRelayStateStore>();
  readonly outbox = new InMemoryRelayStore();
  stored?: RelayLayout;
  members = new Map<string, RelayMember>();
  /** How often a node read the live members (once per tick). */
  memberReads = 0;
  get membership(): RelayMembershipStore {
    return this;
  }
  state(layout: RelayLayout | undefined, partition: number): InMemoryRelayStateStore {
    if (!layout || layout.partitions === 1) return this.single;
    const key = `${layout.generation}:${partition}`;
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = new InMemoryRelayStateStore(this.counter)));
    return state;
  }
  scope(layout: RelayLayout, partition: number): PartitionScope {
    const changes = new ScriptedChangeSource();
    changes.idleMs = 20;
    return { outbox: this.outbox, changes, state: this.state(layout, partition) };
  }
  async stampMissingSlots(): Promise<number> {
    return 0;
  }
  async heartbeat(member: RelayMember): Promise<void> {
    this.members.set(member.owner, { ...member });
  }
  async liveMembers(serverNow: Date): Promise<RelayMember[]> {
    this.memberReads++;
    return [...this.members.values()]
      .filter((m) => m.expiresAt > serverNow)
      .sort((a, b) => (a.owner < b.owner ? -1 : 1));
  }
  async leave(owner: string): Promise<void> {
    this.members.delete(owner);
  }
  async layout(): Promise<RelayLayout | undefined> {
    return this.stored && { ...this.stored };
  }
  async leases(layout: RelayLayout | undefined): Promise<PartitionLease[]> {
    const result: PartitionLease[] = [];
    for (let partition = 0; partition < (layout?.partitions ?? 1); partition++) {
      const lease = this.state(layout, partition).lease;
      if (lease) result.push({ ...lease, partition });
    }
    return result;
  }
  async switchLayout(expected: RelayLayout | undefined, partitions: number) {
    if (this.stored?.generation !== expected?.generation) return undefined;
    const old = await this.leases(expected);
    if (old.some((lease) => lease.expiresAt > new Date())) return undefined;
    this.stored = { partitions, generation: (expected?.generation ?? 0) + 1 };
    if (partitions !== 1 && this.single.lease)
      this.single.lease = { ...this.single.lease, expiresAt: new Date(0) };
    return { ...this.stored };
  }
}

function node(ports: MemoryPartitions, owner: string, partitions: number) {
  const options = resolveRelayOptions({
    publisher: new ScriptedPublisher(),
    partitions,
    batchSize: 10,
    maxInFlight: 100,
    lease: { durationMs: 600, renewMs: 100 },
    idleMs: 20,
    sweepIntervalMs: 200,
    shutdownTimeoutMs: 100,
  });
  return new PartitionedRelayNode(options, {
    owner,
    outbox: ports.outbox,
    state: ports.single,
    changes: new ScriptedChangeSource(),
    publisher: new ScriptedPublisher(),
    clock: systemClock,
    loggers: () => silent,
    metrics: new OutboxRelayMetrics(),
    partitions: ports,
  });
}

const until = async (condition: () => boolean, timeoutMs = 5000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('PartitionedRelayNode', () => {
  it('with one partition and no stored layout, is the single-lease relay (no layout written)', async () => {
    const ports = new MemoryPartitions();
    const a = node(ports, 'a', 1);
    await a.start();
    await until(() => a.isLeader);
    expect(ports.single.lease?.owner).toBe('a');
    expect(ports.stored).toBeUndefined();
    expect(a.status().partitions).toBeUndefined();
    await a.stop();
  });

  it('switches a deployment of one partition to four, spreads them, and takes over from a stopped instance', async () => {
    const ports = new MemoryPartitions();
    const a = node(ports, 'a', 4);
    const b = node(ports, 'b', 4);
    await Promise.all([a.start(), b.start()]);
    await until(() => a.holding().length === 2 && b.holding().length === 2);
    expect(ports.stored).toEqual({ partitions: 4, generation: 1 });
    expect([...a.holding(), ...b.holding()].sort()).toEqual([0, 1, 2, 3]);
    const status = a.status();
    expect(status.role).toBe('leader');
    expect(status.partitions?.filter((p) => p.owned).map((p) => p.partition)).toEqual(a.holding());
    await b.stop();
    expect(ports.members.has('b')).toBe(false);
    await until(() => a.holding().length === 4);
    // b released its partitions: a took them without waiting for an expiry.
    await a.stop();
  });

  it('a partition handed over is not taken again by the same instance until its relay stopped', async () => {
    // Defect (mutation hand-over-forgets-at-once): forgotten as its stop began, the partition
    // was taken again by a second relay of this instance (a new fencing number) while the
    // first still stopped, and that one then released the lease under the second.
    const ports = new MemoryPartitions();
    const a = node(ports, 'a', 4);
    let open = (): void => undefined;
    await a.start();
    try {
      await until(() => a.holding().length === 4);
      const layout = ports.stored as RelayLayout;
      // The lease release at the end of a hand-over waits for the gate: its relay still stops.
      const gate = new Promise<void>((resolve) => (open = resolve));
      const releasing = new Set<number>();
      for (let partition = 0; partition < 4; partition++) {
        const state = ports.state(layout, partition);
        const release = state.releaseLease.bind(state);
        state.releaseLease = async (owner: string, fencing: number) => {
          releasing.add(partition);
          await gate;
          return release(owner, fencing);
        };
      }
      const b = node(ports, 'b', 4);
      await b.start();
      await until(() => releasing.size === 2); // a hands two over to b
      const handedOver = [...releasing];
      const fencings = handedOver.map((partition) => ports.state(layout, partition).lease?.fencing);
      await b.stop(); // b leaves before taking them: a's fair share is all four again
      // Their relays renew them no more: once the leases expired, several of a's ticks (waited
      // for, not timed: a fixed wait let the defect pass on a loaded machine).
      const lease = (partition: number) => ports.state(layout, partition).lease;
      const taken = () =>
        handedOver.some((partition, i) => lease(partition)?.fencing !== fencings[i]);
      await until(
        () =>
          taken() ||
          handedOver.every(
            (partition) => (lease(partition)?.expiresAt.getTime() ?? 0) < Date.now(),
          ),
      );
      const reads = ports.memberReads;
      await until(() => taken() || ports.memberReads >= reads + 3);
      expect(handedOver.map((partition) => ports.state(layout, partition).lease?.fencing)).toEqual(
        fencings,
      );
      open();
      // Once stopped, they are taken anew (new fencing numbers).
      await until(() =>
        handedOver.every(
          (partition, i) => ports.state(layout, partition).lease?.fencing !== fencings[i],
        ),
      );
      expect(a.holding()).toEqual([0, 1, 2, 3]);
    } finally {
      open();
      await a.stop();
    }
  });

  it('waits while a lease of the stored layout is valid, then switches', async () => {
    const ports = new MemoryPartitions();
    const old = node(ports, 'old', 1);
    await old.start();
    await until(() => old.isLeader);
    const fresh = node(ports, 'new', 2);
    await fresh.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fresh.holding()).toEqual([]);
    expect(ports.stored).toBeUndefined();
    await old.stop();
    await until(() => fresh.holding().length === 2);
    expect(ports.stored).toEqual({ partitions: 2, generation: 1 });
    await fresh.stop();
  });

  it('names no owner in status() for a partition whose holder let its lease run out', async () => {
    // Defect: status() compared the lease expiry with the epoch, so a dead holder was named.
    const ports = new MemoryPartitions();
    const layout = { partitions: 2, generation: 1 };
    ports.stored = layout;
    const expired = new Date(Date.now() - 60_000);
    for (const partition of [0, 1]) {
      ports.state(layout, partition).lease = { owner: 'dead', fencing: 1, expiresAt: expired };
    }
    // The dead instance's membership has not run out yet: the plan leaves it a partition.
    ports.members.set('dead', {
      owner: 'dead',
      partitions: 2,
      holding: [0, 1],
      expiresAt: new Date(Date.now() + 60_000),
    });
    const a = node(ports, 'a', 2);
    await a.start();
    try {
      await until(() => a.holding().length === 1);
      const others = a.status().partitions?.filter((p) => !p.owned) ?? [];
      expect(others).toHaveLength(1);
      expect(others[0].owner).toBeUndefined();
    } finally {
      await a.stop();
    }
  });
});
