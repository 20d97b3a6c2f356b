/**
 * The time of `OutboxTestingModule`: the "server" clock that `delayMs` counts from and that
 * `drain()` compares due times with. It follows the real clock, and `drain({ until })` moves it
 * forward (never back), so tests need no real waiting.
 */
export class TestingClock {
  private aheadMs = 0;

  now(): Date {
    return new Date(Date.now() + this.aheadMs);
  }

  /** Moves the clock forward to `time` (no effect if it is there already). */
  advanceTo(time: Date): void {
    this.aheadMs = Math.max(this.aheadMs, time.getTime() - Date.now());
  }

  reset(): void {
    this.aheadMs = 0;
  }
}
