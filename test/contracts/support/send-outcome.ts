/** How a send ended within the time a case gives it. */
export type SendOutcome =
  { status: 'resolved' } | { status: 'rejected'; error: unknown } | { status: 'pending' };

/**
 * `send` settled, or `pending` after `ms`: a send that neither resolves nor rejects in that time
 * fails the case that waits for it (the relay would wait for it forever).
 */
export async function settle(send: Promise<unknown>, ms: number): Promise<SendOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<SendOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'pending' }), ms);
  });
  try {
    return await Promise.race([
      send.then(
        (): SendOutcome => ({ status: 'resolved' }),
        (error: unknown): SendOutcome => ({ status: 'rejected', error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The invariant every fault case checks, the one the relay's correctness rests on: a send
 * reported stored (resolved) stored every message it carried. A rejected send may have stored
 * some or all of them (a duplicate later, allowed); a pending one fails here, as it would hold
 * the relay. `stored` reads the topic back (each partition's `ce_id` headers).
 */
export async function neverReportedStoredWhenNot(
  stored: (topic: string) => Promise<Record<number, string[]>>,
  topic: string,
  outcome: SendOutcome,
  ids: readonly string[],
): Promise<void> {
  if (outcome.status === 'pending') {
    throw new Error(`a send of ${ids.length} messages neither resolved nor rejected in time`);
  }
  if (outcome.status !== 'resolved') return;
  const held = new Set(Object.values(await stored(topic)).flat());
  const missing = ids.filter((id) => !held.has(id));
  if (missing.length > 0) {
    throw new Error(
      `reported stored, but Kafka does not hold ${missing.length} of its ${ids.length} messages: ${missing.join(', ')}`,
    );
  }
}
