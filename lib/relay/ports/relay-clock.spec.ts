import { abortableSleep, systemClock } from './relay-clock';

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
