/** A producer and the sends it still has in flight. */
interface Held<P> {
  producer: P;
  sends: number;
  retired: boolean;
  closing?: Promise<void>;
  forceTimer?: NodeJS.Timeout;
}

/**
 * The producer a sender sends with, made on first use, and the producers it retired
 * (`KafkaSender.replaceProducer`): a retired producer takes no new send; it is closed once the
 * sends it had in flight settled (the client's own retries of them included), or after
 * `graceMs` if one of them never settles (a client that hangs), so that no retired producer
 * keeps its connections open for ever. Used by both real senders.
 */
export class ProducerSlot<P> {
  private current?: Held<P>;
  private readonly retired = new Set<Held<P>>();

  constructor(
    private readonly make: () => P,
    /** Closes a producer; `force`: some of its sends are still in flight. Never rejects. */
    private readonly close: (producer: P, force: boolean) => Promise<void>,
    private readonly graceMs: number,
  ) {}

  /** The producer the next send uses. */
  producer(): P {
    this.current ??= { producer: this.make(), sends: 0, retired: false };
    return this.current.producer;
  }

  /** Runs `send` with the current producer, counted as one of its sends until it settles. */
  async run<T>(send: (producer: P) => Promise<T>): Promise<T> {
    this.producer();
    const held = this.current as Held<P>;
    held.sends++;
    try {
      return await send(held.producer);
    } finally {
      held.sends--;
      if (held.retired && held.sends === 0) void this.closeHeld(held, false);
    }
  }

  /** Forgets `producer` if it is still the current one (it could not connect): no close. */
  forget(producer: P): void {
    if (this.current?.producer === producer) this.current = undefined;
  }

  /** The next send uses a new producer; the current one is closed once its sends settled. */
  retire(): void {
    const held = this.current;
    if (!held) return;
    this.current = undefined;
    held.retired = true;
    if (held.sends === 0) {
      void this.closeHeld(held, false);
      return;
    }
    this.retired.add(held);
    held.forceTimer = setTimeout(() => void this.closeHeld(held, true), this.graceMs);
    held.forceTimer.unref();
  }

  /** Closes every producer now, current and retired (the sender's `disconnect`). */
  async closeAll(): Promise<void> {
    const all = [...this.retired];
    if (this.current) all.push(this.current);
    this.current = undefined;
    await Promise.all(all.map((held) => this.closeHeld(held, held.sends > 0)));
  }

  private closeHeld(held: Held<P>, force: boolean): Promise<void> {
    clearTimeout(held.forceTimer);
    this.retired.delete(held);
    held.closing ??= this.close(held.producer, force);
    return held.closing;
  }
}
