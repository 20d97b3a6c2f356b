/** Bits of the set: 2^16 (8 KiB), whatever the number of aggregates. */
const BITS = 1 << 16;

/**
 * Aggregates that may have marked pending events in the collection (`nextAttemptAt`: a failure
 * waiting for its retry, or events held back behind one or behind a held destination) while the
 * engine keeps no lane for them. Before publishing a newer event of such an aggregate, the
 * engine reads the aggregate from the collection, so its order holds without a lane per
 * aggregate in memory.
 *
 * A fixed-size bit set (two bits per aggregate): memory does not grow with the aggregates, and
 * an aggregate that was never added may be reported (it is then read from the collection once,
 * which is slower but correct). It is rebuilt from the collection (`startRebuild`, every
 * marked aggregate found, `finishRebuild`), which forgets the aggregates whose marks are gone;
 * what is added meanwhile goes into both sets.
 */
export class UntrackedMarks {
  private current: Uint8Array = new Uint8Array(BITS / 8);
  private added = 0;
  private next?: { bits: Uint8Array; added: number };

  /** Whether nothing was added since the last rebuild (every answer is then "no"). */
  get empty(): boolean {
    return this.added === 0;
  }

  add(key: string): void {
    const [a, b] = positions(key);
    set(this.current, a, b);
    this.added++;
    if (this.next) {
      set(this.next.bits, a, b);
      this.next.added++;
    }
  }

  /** False: the aggregate has no marked event that the engine does not track. */
  mayHave(key: string): boolean {
    if (this.added === 0) return false;
    const [a, b] = positions(key);
    return isSet(this.current, a) && isSet(this.current, b);
  }

  startRebuild(): void {
    this.next = { bits: new Uint8Array(BITS / 8), added: 0 };
  }

  finishRebuild(): void {
    if (!this.next) return;
    this.current = this.next.bits;
    this.added = this.next.added;
    this.next = undefined;
  }

  abandonRebuild(): void {
    this.next = undefined;
  }
}

/** Two bit positions from two FNV-1a hashes of `key` (different offsets). */
function positions(key: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 0x01000193);
    h2 = Math.imul(h2 ^ code, 0x5bd1e995);
  }
  return [(h1 >>> 0) % BITS, (h2 >>> 0) % BITS];
}

function set(bits: Uint8Array, a: number, b: number): void {
  bits[a >> 3] |= 1 << (a & 7);
  bits[b >> 3] |= 1 << (b & 7);
}

function isSet(bits: Uint8Array, position: number): boolean {
  return (bits[position >> 3] & (1 << (position & 7))) !== 0;
}
