/**
 * A send the Kafka client had not settled within the relay's deadline (`relay.kafka.sendTimeout`).
 * Its outcome is unknown: the broker may have stored some or all of it, later. The client may
 * still be retrying it; the relay stops waiting, counts it like a broker outage and sends again
 * later (duplicates, never losses).
 */
export class KafkaSendTimeoutError extends Error {
  override readonly name = 'OutboxKafkaSendTimeout';

  constructor(readonly timeoutMs: number) {
    super(
      `the Kafka client did not settle the send within ${timeoutMs} ms (relay.kafka.sendTimeout)`,
    );
  }
}
