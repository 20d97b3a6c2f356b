import { SimScheduler } from '../core/sim.scheduler';
import { SimTrace } from '../core/sim.trace';
import { SimHistory } from '../world/sim.history';
import { SIM_EPOCH_MS, SimProcess } from './sim-process';

function process(skewMs = 0) {
  const scheduler = new SimScheduler(new SimTrace());
  const proc = new SimProcess('relay-1', scheduler, new SimHistory(), new SimTrace(), skewMs);
  proc.boot(5_000);
  return { scheduler, proc };
}

describe('SimProcess', () => {
  it('has a skewed wall clock that can step, and a monotonic clock that cannot', async () => {
    const { scheduler, proc } = process(-60_000);
    const clock = proc.clock();
    scheduler.at(100, 't', 'step', () => proc.stepClock(120_000));
    await scheduler.run({ until: 200 });
    expect(clock.now()).toBe(SIM_EPOCH_MS + 200 + 60_000);
    expect(clock.monotonic()).toBe(5_200);
  });

  it('holds timers and answers while paused, and runs them when the pause ends', async () => {
    const { scheduler, proc } = process();
    const clock = proc.clock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(scheduler.now), 100);
    scheduler.at(50, 't', 'pause', () => proc.pause(1_000));
    await scheduler.run({ until: 2_000 });
    expect(fired).toEqual([1_000]);
  });

  it('drops everything of an incarnation that crashed, also when it restarts before', async () => {
    const { scheduler, proc } = process();
    const fired: string[] = [];
    const generation = proc.incarnation;
    proc.clock().setTimeout(() => fired.push('old timer'), 100);
    proc.deliverAt(
      150,
      'answer',
      () => fired.push('old answer'),
      () => fired.push('dropped'),
      generation,
    );
    scheduler.at(50, 't', 'crash', () => proc.crash('test'));
    scheduler.at(60, 't', 'restart', () => proc.boot(0));
    await scheduler.run({ until: 1_000 });
    expect(fired).toEqual(['dropped']);
    expect(proc.isAlive).toBe(true);
  });

  it('crashes at the k-th port call, before or right after issuing it', () => {
    const { proc } = process();
    proc.crashAtPortCall(2, true);
    expect(proc.portCall()).toEqual({ proceed: true, crashAfter: false });
    expect(proc.portCall()).toEqual({ proceed: true, crashAfter: true });
    proc.crash('after issuing');
    proc.boot(0);
    proc.crashAtPortCall(1, false);
    expect(proc.portCall()).toEqual({ proceed: false, crashAfter: false });
    expect(proc.isAlive).toBe(false);
  });

  it('calls an interval job every period until cancelled', async () => {
    const { scheduler, proc } = process();
    const ticks: number[] = [];
    const job = proc.clock().every('job', 100, () => ticks.push(scheduler.now));
    scheduler.at(350, 't', 'cancel', () => job.cancel());
    await scheduler.run({ until: 1_000 });
    expect(ticks).toEqual([100, 200, 300]);
  });

  it('crashes at the k-th timer firing, before its callback or right after it ran', async () => {
    const before = process();
    const ran: string[] = [];
    const clock = before.proc.clock();
    before.proc.crashAtTimerFiring(2, false);
    clock.setTimeout(() => ran.push('first'), 100);
    clock.setTimeout(() => ran.push('second'), 200);
    await before.scheduler.run({ until: 1_000 });
    expect(ran).toEqual(['first']);
    expect(before.proc.isAlive).toBe(false);

    const after = process();
    after.proc.crashAtTimerFiring(1, true);
    after.proc.clock().setTimeout(() => ran.push('ran, then crashed'), 100);
    await after.scheduler.run({ until: 1_000 });
    expect(ran).toEqual(['first', 'ran, then crashed']);
    expect(after.proc.isAlive).toBe(false);
  });

  it('runs its clocks and timers at the drifted rate, continuously', async () => {
    const { scheduler, proc } = process();
    const clock = proc.clock();
    const fired: number[] = [];
    scheduler.at(100, 't', 'drift', () => {
      proc.setClockRate(0.5);
      clock.setTimeout(() => fired.push(scheduler.now), 100);
    });
    await scheduler.run({ until: 300 });
    expect(fired).toEqual([300]);
    expect(clock.monotonic()).toBe(5_000 + 100 + 100);
    expect(clock.now()).toBe(SIM_EPOCH_MS + 200);
  });
});
