import type { ResumeToken } from '../../lib/relay/ports/change-source';
import type { RelayStateStore } from '../../lib/relay/ports/relay-state.store';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/** One implementation of `RelayStateStore` with no lease and no checkpoint stored yet. */
export interface StateStoreFixture {
  /** The store; every call of `store()` reaches the same lease and checkpoint. */
  store(): RelayStateStore;
  /** A resume token of this implementation's change stream (opaque to the relay), by number. */
  token(n: number): ResumeToken;
}

export const STATE_STORE_CASES = {
  serverTime: 'serverTime is the server’s clock: a Date that does not go back',
  acquireFree: 'acquireLease takes a lease nobody holds, fencing 1, until the expiry asked for',
  acquireHeld:
    'acquireLease is refused while another owner’s lease expires after serverNow, and takes it at its expiry, fencing + 1',
  acquireOwn: 'the holder acquiring its own valid lease again gets fencing + 1 and the new expiry',
  renew:
    'renewLease moves the expiry with our owner and fencing, also once expired if nobody took it; false with a stale fencing or once taken',
  release: 'releaseLease frees the lease at once; a release with a stale fencing changes nothing',
  claim:
    'claimCheckpoint: none stored gives an empty checkpoint; a fencing below the stamp is refused, an equal or higher one claims',
  save: 'saveCheckpoint lands with a fencing at or above the stamp (true), not below (false); a claim returns token and savedAt',
  clear: 'clearCheckpoint removes the token under the same fencing rule, and records when',
  saveFirst: 'saveCheckpoint before any claim creates the checkpoint',
} as const;

export type StateStoreCase = keyof typeof STATE_STORE_CASES;

const later = (date: Date, ms: number): Date => new Date(date.getTime() + ms);

/** The contract of `RelayStateStore` (lib/relay/ports/relay-state.store.ts). */
export function relayStateStoreContract(
  fixture: () => Promise<StateStoreFixture>,
  skips: ContractSkips<StateStoreCase> = {},
): void {
  const test = contractCases(STATE_STORE_CASES, skips);
  let f: StateStoreFixture;
  let state: RelayStateStore;
  let now: Date;
  beforeEach(async () => {
    f = await fixture();
    state = f.store();
    now = await state.serverTime();
  });

  test('serverTime', async () => {
    expect(now).toBeInstanceOf(Date);
    const next = await state.serverTime();
    expect(next.getTime()).toBeGreaterThanOrEqual(now.getTime());
  });

  test('acquireFree', async () => {
    expect(await state.acquireLease('a', now, later(now, 10_000))).toEqual({
      owner: 'a',
      fencing: 1,
      expiresAt: later(now, 10_000),
    });
  });

  test('acquireHeld', async () => {
    await state.acquireLease('a', now, later(now, 10_000));
    expect(
      await f.store().acquireLease('b', later(now, 9_999), later(now, 20_000)),
    ).toBeUndefined();
    expect(await f.store().acquireLease('b', later(now, 10_000), later(now, 20_000))).toEqual({
      owner: 'b',
      fencing: 2,
      expiresAt: later(now, 20_000),
    });
    expect(await state.acquireLease('a', later(now, 10_000), later(now, 30_000))).toBeUndefined();
  });

  test('acquireOwn', async () => {
    await state.acquireLease('a', now, later(now, 10_000));
    expect(await state.acquireLease('a', later(now, 1), later(now, 50_000))).toEqual({
      owner: 'a',
      fencing: 2,
      expiresAt: later(now, 50_000),
    });
    expect(
      await f.store().acquireLease('b', later(now, 10_000), later(now, 60_000)),
    ).toBeUndefined();
  });

  test('renew', async () => {
    // Expired at once by the server's clock; nobody took it, so it is still ours to renew.
    expect(await state.acquireLease('a', now, later(now, -1))).toMatchObject({ fencing: 1 });
    expect(await state.renewLease('a', 1, later(now, 40_000))).toBe(true);
    expect(
      await f.store().acquireLease('b', later(now, 30_000), later(now, 60_000)),
    ).toBeUndefined();
    expect(await state.renewLease('a', 2, later(now, 50_000))).toBe(false);
    expect(await state.renewLease('b', 1, later(now, 50_000))).toBe(false);
    expect(await f.store().acquireLease('b', later(now, 40_000), later(now, 90_000))).toMatchObject(
      {
        owner: 'b',
        fencing: 2,
      },
    );
    expect(await state.renewLease('a', 1, later(now, 100_000))).toBe(false);
  });

  test('release', async () => {
    await state.acquireLease('a', now, later(now, 60_000));
    await state.releaseLease('a', 7);
    await state.releaseLease('b', 1);
    expect(await f.store().acquireLease('b', now, later(now, 60_000))).toBeUndefined();
    await state.releaseLease('a', 1);
    expect(await f.store().acquireLease('b', now, later(now, 60_000))).toMatchObject({
      owner: 'b',
      fencing: 2,
    });
    expect(await state.renewLease('a', 1, later(now, 90_000))).toBe(false);
  });

  test('claim', async () => {
    expect(await state.claimCheckpoint(3)).toEqual({ token: undefined, savedAt: undefined });
    expect(await f.store().claimCheckpoint(2)).toBeUndefined();
    expect(await state.claimCheckpoint(3)).toEqual({ token: undefined, savedAt: undefined });
    expect(await f.store().claimCheckpoint(4)).toEqual({ token: undefined, savedAt: undefined });
    expect(await state.claimCheckpoint(3)).toBeUndefined();
  });

  test('save', async () => {
    await state.claimCheckpoint(2);
    expect(await state.saveCheckpoint(f.token(1), 2, later(now, 1))).toBe(true);
    expect(await state.saveCheckpoint(f.token(2), 1, later(now, 2))).toBe(false);
    expect(await state.claimCheckpoint(3)).toEqual({ token: f.token(1), savedAt: later(now, 1) });
    expect(await state.saveCheckpoint(f.token(3), 2, later(now, 3))).toBe(false);
    expect(await state.saveCheckpoint(f.token(4), 3, later(now, 4))).toBe(true);
    expect(await state.saveCheckpoint(f.token(5), 5, later(now, 5))).toBe(true);
    expect(await state.claimCheckpoint(5)).toEqual({ token: f.token(5), savedAt: later(now, 5) });
  });

  test('clear', async () => {
    await state.claimCheckpoint(2);
    await state.saveCheckpoint(f.token(1), 2, later(now, 1));
    expect(await state.clearCheckpoint(1, later(now, 2))).toBe(false);
    expect(await state.claimCheckpoint(2)).toEqual({ token: f.token(1), savedAt: later(now, 1) });
    expect(await state.clearCheckpoint(2, later(now, 3))).toBe(true);
    expect(await state.claimCheckpoint(2)).toEqual({ token: undefined, savedAt: later(now, 3) });
  });

  test('saveFirst', async () => {
    expect(await state.saveCheckpoint(f.token(1), 4, later(now, 1))).toBe(true);
    expect(await state.claimCheckpoint(3)).toBeUndefined();
    expect(await state.claimCheckpoint(4)).toEqual({ token: f.token(1), savedAt: later(now, 1) });
  });
}
