import { withSendDeadline } from './send.deadline';

describe('withSendDeadline', () => {
  afterEach(() => jest.useRealTimers());

  it('settles with the work, and leaves no timer behind', async () => {
    jest.useFakeTimers();
    await expect(withSendDeadline(Promise.resolve('stored'), 60_000)).resolves.toBe('stored');
    await expect(withSendDeadline(Promise.reject(new Error('refused')), 60_000)).rejects.toThrow(
      'refused',
    );
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with KafkaSendTimeoutError at the deadline; a late answer changes nothing', async () => {
    jest.useFakeTimers();
    let answer!: () => void;
    const late = new Promise<void>((resolve) => (answer = resolve));
    const sent = withSendDeadline(late, 5_000);
    const outcome = sent.catch((error: unknown) => error);
    jest.advanceTimersByTime(5_000);
    expect(await outcome).toMatchObject({ name: 'OutboxKafkaSendTimeout', timeoutMs: 5_000 });
    answer();
    await late;
    expect(jest.getTimerCount()).toBe(0);
  });
});
