import type { AggregateLane } from './aggregate.lane';
import { aggregateKey } from '../../documents/outbox-event.document';
import { CatchUpRequests } from './catchup.requests';
import { LaneTable } from './lane.table';

const ref = (aggregateId: string) => ({ aggregateType: 'Order', aggregateId });
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** One lane at most (maxInFlight 1); `evictable` is a lane that only waits for a held destination. */
function setup() {
  const lanes = new LaneTable(() => 1);
  const started: string[] = [];
  const state: { evictable?: AggregateLane; waitingLanes: number } = { waitingLanes: 0 };
  const requests = new CatchUpRequests({
    lanes,
    holds: {
      get waitingLanes() {
        return state.waitingLanes;
      },
    },
    steps: {
      evictWaiting: () => {
        if (!state.evictable || !lanes.park(state.evictable, true)) return false;
        state.evictable = undefined;
        state.waitingLanes = 0;
        return true;
      },
      startCatchUp: (lane) => started.push(lane.ref.aggregateId),
    },
    readsQueued: () => 0,
    closed: () => false,
  });
  return { lanes, started, state, requests };
}

describe('CatchUpRequests (the due reader asks the engine to read aggregates from the collection)', () => {
  it('takes a free lane at once', () => {
    const t = setup();
    expect(t.requests.request(ref('a'))).toBe(true);
    expect(t.started).toEqual(['a']);
    expect(t.requests.request(ref('a'))).toBe(false); // tracked
  });

  it('a request made while the table is full takes the next lane that leaves, without being asked again', async () => {
    // Defect: refused, the aggregate waited for the due reader's next pass (1 s later with no
    // room): with maxInFlight 1, one due aggregate a second.
    const t = setup();
    const busy = t.lanes.laneOf(ref('x'));
    expect(t.requests.request(ref('a'))).toBe(true);
    expect(t.requests.request(ref('b'))).toBe(true);
    expect(t.started).toEqual([]);
    expect(t.requests.isTracked(ref('a'))).toBe(true);
    expect(t.requests.busy).toBe(3);
    t.lanes.delete(busy.key);
    await flush();
    expect(t.started).toEqual(['a']);
    t.lanes.delete(aggregateKey(ref('a')));
    await flush();
    expect(t.started).toEqual(['a', 'b']);
    expect(t.requests.busy).toBe(1);
  });

  it('a lane that only waits for a held destination gives its place up', () => {
    // Defect: aggregates waiting for a held topic filled the lane table, and the due
    // aggregates of every other topic waited until the topic accepted events again.
    const t = setup();
    t.state.evictable = t.lanes.laneOf(ref('held'));
    t.state.waitingLanes = 1;
    expect(t.requests.room).toBeGreaterThan(0);
    expect(t.requests.request(ref('a'))).toBe(true);
    expect(t.started).toEqual(['a']);
    expect(t.lanes.has(aggregateKey(ref('held')))).toBe(false);
    expect(t.lanes.untracked.mayHave(aggregateKey(ref('held')))).toBe(true);
  });

  it('drops a waiting aggregate that got a lane meanwhile (its lane reads it)', async () => {
    const t = setup();
    const busy = t.lanes.laneOf(ref('x'));
    t.requests.request(ref('a'));
    t.lanes.delete(busy.key);
    t.lanes.laneOf(ref('a')); // the stream brought one of its events first
    await flush();
    expect(t.started).toEqual([]);
    expect(t.requests.busy).toBe(1);
  });
});
