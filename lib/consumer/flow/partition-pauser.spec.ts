import { pausePartition } from './partition-pauser';

describe('pausing one partition', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('pauses that partition and resumes it after the delay; a new pause replaces the old one', () => {
    const consumer = { pause: jest.fn(), resume: jest.fn() };
    expect(pausePartition(consumer, 'Order', 2, 1000)).toBe(true);
    expect(consumer.pause).toHaveBeenCalledWith([{ topic: 'Order', partitions: [2] }]);
    jest.advanceTimersByTime(500);
    pausePartition(consumer, 'Order', 2, 1000);
    jest.advanceTimersByTime(600);
    expect(consumer.resume).not.toHaveBeenCalled();
    jest.advanceTimersByTime(400);
    expect(consumer.resume).toHaveBeenCalledTimes(1);
    expect(consumer.resume).toHaveBeenCalledWith([{ topic: 'Order', partitions: [2] }]);
  });

  it('does nothing with something that cannot pause, or a stopped consumer', () => {
    expect(pausePartition(undefined, 'Order', 0, 10)).toBe(false);
    const stopped = {
      pause: () => {
        throw new Error('not running');
      },
      resume: jest.fn(),
    };
    expect(pausePartition(stopped, 'Order', 0, 10)).toBe(false);
  });
});
