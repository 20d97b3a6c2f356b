import { CheckpointTracker } from './checkpoint.tracker';

describe('CheckpointTracker (checkpoint only what the broker acknowledged)', () => {
  it('moves the safe token over a contiguous settled prefix only', () => {
    const tracker = new CheckpointTracker();
    const [a, b, c] = ['t1', 't2', 't3'].map((token) => tracker.track(token));
    tracker.settle(b);
    tracker.settle(c);
    expect(tracker.pending()).toBeUndefined();
    tracker.settle(a);
    expect(tracker.pending()?.token).toBe('t3');
    expect(tracker.unsaved).toBe(3);
  });

  it('does not offer the same token twice once saved', () => {
    const tracker = new CheckpointTracker();
    tracker.settle(tracker.track('t1'));
    const entry = tracker.pending();
    expect(entry?.token).toBe('t1');
    tracker.saved(entry!);
    expect(tracker.pending()).toBeUndefined();
    expect(tracker.unsaved).toBe(0);
  });

  it('offers the idle stream position only when nothing is unsettled', () => {
    const tracker = new CheckpointTracker();
    const seq = tracker.track('t1');
    tracker.observeIdle('pbrt-1');
    expect(tracker.pending()).toBeUndefined();
    tracker.settle(seq);
    tracker.observeIdle('pbrt-2');
    expect(tracker.pending()?.token).toBe('pbrt-2');
  });

  it('ignores settlements from before a reset', () => {
    const tracker = new CheckpointTracker();
    const old = tracker.track('t1');
    tracker.reset();
    tracker.settle(old);
    expect(tracker.pending()).toBeUndefined();
    tracker.settle(tracker.track('t2'));
    expect(tracker.pending()?.token).toBe('t2');
  });
});

describe('CheckpointTracker barriers (the drain before the stream)', () => {
  it('holds every later position back until the barrier settles, without being a position itself', () => {
    const tracker = new CheckpointTracker();
    const barrier = tracker.track(undefined);
    const first = tracker.track('t1');
    tracker.settle(first);
    expect(tracker.pending()).toBeUndefined();
    expect(tracker.latest()).toBeUndefined();
    tracker.settle(barrier);
    expect(tracker.pending()?.token).toBe('t1');
  });

  it('a barrier settled alone leaves nothing to save', () => {
    const tracker = new CheckpointTracker();
    tracker.settle(tracker.track(undefined));
    expect(tracker.pending()).toBeUndefined();
  });
});
