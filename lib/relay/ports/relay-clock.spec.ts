import { abortableSleep, systemClock, untilAborted } from './relay-clock';

describe('abortableSleep', () => {
  it('resolves after its time when nothing aborts it', async () => {
    const started = Date.now();
    await abortableSleep(systemClock, 30, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('resolves as soon as the signal aborts, and at once when it already did', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const sleeping = abortableSleep(systemClock, 60_000, controller.signal);
    setTimeout(() => controller.abort(), 10);
    await sleeping;
    await abortableSleep(systemClock, 60_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('untilAborted', () => {
  it('gives what the promise gives, and passes its rejection on, while the signal is not aborted', async () => {
    const signal = new AbortController().signal;
    await expect(untilAborted(Promise.resolve('value'), signal)).resolves.toBe('value');
    await expect(untilAborted(Promise.reject(new Error('refused')), signal)).rejects.toThrow(
      'refused',
    );
  });

  it('gives undefined as soon as the signal aborts, and at once when it already did', async () => {
    const controller = new AbortController();
    const never = new Promise<string>(() => undefined);
    const waiting = untilAborted(never, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
    await expect(untilAborted(never, controller.signal)).resolves.toBeUndefined();
  });
});
