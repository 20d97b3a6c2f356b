import type { mongo } from 'mongoose';
import { systemClock } from '../ports/relay-clock';
import { slotsOfPartition } from '../ports/partition-layout';
import { resolveRelayOptions } from '../relay.options';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { MongoClusterChangeSource } from './mongo-cluster-change.source';
import { MongoTenantPorts } from './mongo-tenant.ports';

const silent = { log() {}, warn() {}, error() {}, debug() {} };

/** A client whose collections record the filters they are asked (no server). */
function recordingClient() {
  const calls: Array<{ db: string; coll: string; op: string; arg: unknown }> = [];
  const watched: unknown[] = [];
  const collection = (db: string, coll: string) => ({
    collectionName: coll,
    get db() {
      return client.db(db);
    },
    countDocuments: (filter: unknown) => {
      calls.push({ db, coll, op: 'count', arg: filter });
      return Promise.resolve(0);
    },
    findOneAndUpdate: (filter: unknown) => {
      calls.push({ db, coll, op: 'findOneAndUpdate', arg: filter });
      return Promise.resolve({ ...(filter as object), fencing: 7 });
    },
    watch: (pipeline: unknown) => {
      watched.push(pipeline);
      throw new Error('no server');
    },
  });
  const dbs = new Map<string, mongo.Db>();
  const client = {
    db: (name: string) => {
      if (!dbs.has(name)) {
        dbs.set(name, {
          databaseName: name,
          client,
          collection: (coll: string) => collection(name, coll),
          command: () => Promise.resolve({}),
        } as unknown as mongo.Db);
      }
      return dbs.get(name) as mongo.Db;
    },
    watch: (pipeline: unknown) => {
      watched.push(pipeline);
      throw new Error('no server');
    },
  } as unknown as mongo.MongoClient;
  return { client, calls, watched };
}

function portsOf(stream: 'cluster' | 'per-database') {
  const { client, calls, watched } = recordingClient();
  const relay = resolveRelayOptions({
    publisher: new ScriptedPublisher(),
    name: 'r',
    partitions: 2,
  });
  const ports = new MongoTenantPorts({
    client,
    appDb: client.db('app'),
    collections: {
      outbox: 'outbox',
      deadLetters: 'dead',
      relayState: 'state',
    } as never,
    tenants: { databases: ['t1', 't2'], stream },
    relay,
    clock: systemClock,
    random: () => 0.5,
    logger: silent,
  });
  return { ports, calls, watched };
}

describe('MongoTenantPorts.forPartition', () => {
  const layout = { partitions: 2, generation: 3 };

  it('is the ports themselves for a layout of one partition, and one per partition of a layout', () => {
    const { ports } = portsOf('cluster');
    expect(ports.forPartition({ partitions: 1, generation: 1 }, 0)).toBe(ports);
    const p0 = ports.forPartition(layout, 0);
    expect(ports.forPartition(layout, 0)).toBe(p0);
    expect(ports.forPartition(layout, 1)).not.toBe(p0);
    expect(p0.watch).toBeDefined();
    expect(p0.watch).not.toBe(ports.watch); // a cluster-wide stream of its own
    // A new layout: new ports (those of the old one stay with the terms that have them).
    expect(ports.forPartition({ partitions: 2, generation: 4 }, 0)).not.toBe(p0);
  });

  it("keeps each database's checkpoint per (database, partition), next to the partition's lease", async () => {
    const { ports, calls } = portsOf('per-database');
    await ports.forPartition(layout, 1).forDatabase('t1', 7).state.claimCheckpoint(7);
    await ports.forPartition(layout, 0).forDatabase('t1', 7).state.claimCheckpoint(7);
    await ports.forDatabase('t1').state.claimCheckpoint(7);
    const ids = calls
      .filter((call) => call.op === 'findOneAndUpdate')
      .map((call) => (call.arg as { _id: string })._id);
    expect(ids).toEqual(['checkpoint:r:g3:p1@t1', 'checkpoint:r:g3:p0@t1', 'checkpoint:r@t1']);
    expect(calls.every((call) => call.db === 'app' && call.coll === 'state')).toBe(true);
  });

  it("with the cluster-wide stream, claims the partition's own checkpoint document once per term", async () => {
    const { ports, calls } = portsOf('cluster');
    const p1 = ports.forPartition(layout, 1);
    await p1.forDatabase('t1', 7).state.claimCheckpoint(7);
    await p1.forDatabase('t2', 7).state.claimCheckpoint(7);
    const claimed = calls.filter((call) => call.op === 'findOneAndUpdate');
    expect(claimed.map((call) => (call.arg as { _id: string })._id)).toEqual([
      'checkpoint:r:g3:p1',
    ]);
  });

  it("counts as pending the partition's slots and the events without a slot", async () => {
    const { ports, calls } = portsOf('cluster');
    await ports.forPartition(layout, 1).hasPending?.('t2');
    await ports.hasPending?.('t2');
    const range = slotsOfPartition(1, 2);
    expect(calls.map((call) => [call.db, call.arg])).toEqual([
      [
        't2',
        {
          status: 'pending',
          $or: [{ slot: { $gte: range.from, $lt: range.to } }, { slot: null }],
        },
      ],
      ['t2', { status: 'pending' }],
    ]);
  });

  it("filters each stream on the partition's slots (a database's own, and the cluster-wide one)", async () => {
    const range = slotsOfPartition(0, 2);
    const inRange = { 'fullDocument.slot': { $gte: range.from, $lt: range.to } };
    // The hub retries a failed opening without end: its source, as the hub makes it, directly.
    const cluster = recordingClient();
    const options = { batchSize: 10, idleMs: 20 };
    await expect(
      new MongoClusterChangeSource(cluster.client, 'outbox', ['t1'], options, range).open(
        undefined,
      ),
    ).rejects.toThrow();
    const perDatabase = portsOf('per-database');
    await expect(
      perDatabase.ports.forPartition(layout, 0).forDatabase('t1', 7).changes.open(undefined),
    ).rejects.toThrow();
    expect(JSON.stringify(cluster.watched)).toContain(JSON.stringify(inRange));
    expect(JSON.stringify(cluster.watched)).toContain('"ns.db":{"$in":["t1"]}');
    const slotFilter = JSON.stringify(inRange['fullDocument.slot']);
    expect(JSON.stringify(perDatabase.watched)).toContain(`"fullDocument.slot":${slotFilter}`);
  });
});
