import { eventSlot, SLOT_COUNT } from './event-slot';

describe('eventSlot', () => {
  it('is stable: these values are stored on documents and must never change', () => {
    expect(eventSlot('Order', '1')).toBe(eventSlot('Order', '1'));
    expect([eventSlot('Order', '1'), eventSlot('Order', '2'), eventSlot('Customer', '1')]).toEqual(
      PINNED,
    );
  });

  it('separates type and id (no concatenation collisions)', () => {
    expect(eventSlot('Ab', 'c')).not.toBe(eventSlot('A', 'bc'));
  });

  it('spreads aggregates evenly over the slots', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 64_000; i++)
      counts[Math.floor((eventSlot('Order', String(i)) * 16) / SLOT_COUNT)]++;
    for (const count of counts) expect(Math.abs(count - 4000)).toBeLessThan(400);
  });
});

const PINNED = [1018, 1972, 1541];
