import { ProducerSlot } from './producer.slot';

function slot(graceMs = 1_000) {
  let made = 0;
  const closed: Array<[number, boolean]> = [];
  const producers = new ProducerSlot(
    () => ++made,
    async (producer: number, force: boolean) => void closed.push([producer, force]),
    graceMs,
  );
  return { producers, closed };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('ProducerSlot (retired producers are closed once their sends settled)', () => {
  afterEach(() => jest.useRealTimers());

  it('a retired producer with a send in flight is closed when that send settles, not before', async () => {
    const { producers, closed } = slot();
    let settle!: () => void;
    const inFlight = producers.run(() => new Promise<void>((resolve) => (settle = resolve)));
    producers.retire();
    expect(producers.producer()).toBe(2);
    await flush();
    expect(closed).toEqual([]);
    settle();
    await inFlight;
    await flush();
    expect(closed).toEqual([[1, false]]);
  });

  it('a send that never settles: the retired producer is closed with force after the grace', async () => {
    jest.useFakeTimers();
    const { producers, closed } = slot(5_000);
    void producers.run(() => new Promise<void>(() => {}));
    producers.retire();
    jest.advanceTimersByTime(4_999);
    expect(closed).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(closed).toEqual([[1, true]]);
  });

  it('closeAll closes the current producer and the retired ones, each once, and leaves no timer', async () => {
    jest.useFakeTimers();
    const { producers, closed } = slot();
    void producers.run(() => new Promise<void>(() => {}));
    producers.retire();
    producers.producer();
    await producers.closeAll();
    expect(closed).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a producer forgotten (its connect failed) is not closed and not reused', () => {
    const { producers, closed } = slot();
    producers.forget(producers.producer());
    expect(producers.producer()).toBe(2);
    expect(closed).toEqual([]);
  });
});
