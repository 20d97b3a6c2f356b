/** The write side's slice of the resolved options (token `OUTBOX_EVENTS_OPTIONS`). */
export interface OutboxEventsOptions {
  maxPayloadBytes: number;
  allowBigInt: boolean;
  aggregateSequence: boolean;
  /** Scheduled events allowed (and the order rule's read made). */
  scheduledEvents: boolean;
}
