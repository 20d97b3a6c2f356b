/** A read of the collection in progress, from `AckedEvents.openRead()`. */
export interface ReadTicket {
  readonly since: number;
}

/**
 * Events the broker acknowledged whose `published` mark may not be visible to a read yet. A read
 * of the collection that started before a mark landed can still return the event as pending,
 * even if its answer arrives after the mark's: so an event counts as acknowledged for a read if
 * its mark was on its way when the read started, or landed while the read was open.
 */
export class AckedEvents {
  private readonly marking = new Map<string, Promise<void>>();
  private readonly landedAt = new Map<string, number>();
  private readonly open = new Set<ReadTicket>();
  private seq = 0;

  /** `ids` were acknowledged; `mark` settles once their mark landed (or failed). */
  marked(ids: readonly string[], mark: Promise<void>): void {
    for (const id of ids) this.marking.set(id, mark);
    void mark.finally(() => {
      this.seq++;
      for (const id of ids) {
        if (this.marking.get(id) === mark) this.marking.delete(id);
        if (this.open.size > 0) this.landedAt.set(id, this.seq);
      }
    });
  }

  openRead(): ReadTicket {
    const ticket = { since: this.seq };
    this.open.add(ticket);
    return ticket;
  }

  closeRead(ticket: ReadTicket): void {
    this.open.delete(ticket);
    if (this.open.size === 0) {
      this.landedAt.clear();
      return;
    }
    const oldest = Math.min(...[...this.open].map((open) => open.since));
    for (const [id, at] of this.landedAt) if (at <= oldest) this.landedAt.delete(id);
  }

  /** Whether `id`, read as pending by the read of `ticket` (if any), was acknowledged already. */
  has(id: string, ticket?: ReadTicket): boolean {
    if (this.marking.has(id)) return true;
    const landed = this.landedAt.get(id);
    return ticket !== undefined && landed !== undefined && landed > ticket.since;
  }

  /** The marks on their way for these ids (to wait for before reading again). */
  pendingMarks(ids: readonly string[]): Array<Promise<void>> {
    const out = new Set<Promise<void>>();
    for (const id of ids) {
      const mark = this.marking.get(id);
      if (mark) out.add(mark);
    }
    return [...out];
  }
}
