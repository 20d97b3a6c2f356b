/** What `OutboxDeadLetters.requeueMany` did (or, with `dryRun`, would do). */
export interface DeadLetterRequeueResult {
  dryRun: boolean;
  /** Events put back into the outbox (0 in a dry run). */
  requeued: number;
  /** Their ids, in the order they were requeued (in a dry run: the ones that would be). */
  eventIds: string[];
  /** Events that could not be requeued, with the error; they stay dead-lettered. */
  failed: Array<{ eventId: string; error: string }>;
  /** Transactions used (pages read, in a dry run). */
  batches: number;
}

export const emptyRequeueResult = (dryRun = false): DeadLetterRequeueResult => ({
  dryRun,
  requeued: 0,
  eventIds: [],
  failed: [],
  batches: 0,
});

/** What `OutboxDeadLetters.purge` did (or, with `dryRun`, would do). */
export interface DeadLetterPurgeResult {
  dryRun: boolean;
  /** Dead letters matching the filter. */
  matched: number;
  /** Dead letters deleted (0 in a dry run). */
  deleted: number;
}
