import type { Logger } from '@nestjs/common';
import type { TransactionRunner } from '../transaction/transaction.runner';
import type { PublishErrorEntry } from '../documents/outbox-event.document';
import type { ConsumedMessage } from './input/consumed-message';
import type { DeadLetterReason } from '../documents/consumer-dead-letter.document';

/**
 * One failure of one event, as stored in a dead letter's `errors`: the relay's entry, whose
 * `attempt` is 0 for a message refused before any attempt.
 */
export type FailureEntry = PublishErrorEntry;

/** A message the consumer gives up on. */
export interface DeadLetter {
  consumer: string;
  /** Null when the message had no usable event id. */
  eventId: string | null;
  reason: DeadLetterReason;
  /** Failures counted for this event (0 when refused before any attempt). */
  attempts: number;
  /** The last error (for input problems: what is wrong with the message). */
  lastError: string;
  at: Date;
  message: ConsumedMessage;
  /** Set when a copy went (or should have gone) to a dead-letter topic. */
  topicCopy?: { topic: string; published: boolean; error?: string };
}

/** The `(consumer, eventId)` records. `insert` runs inside the handler's transaction. */
export interface ProcessedEventStore {
  /** Rejects with a duplicate-key error (code 11000) when the pair exists. */
  insert(consumer: string, eventId: string): Promise<void>;
  /** Whether `(consumer, eventId)` was applied (read outside any transaction). */
  wasApplied(consumer: string, eventId: string): Promise<boolean>;
  /** Inserts the records of a batch's events in one command, in its transaction; rejects on a duplicate. */
  insertMany(consumer: string, eventIds: readonly string[]): Promise<void>;
  /** Which of `eventIds` were applied (one read, outside any transaction). */
  appliedAmong(consumer: string, eventIds: readonly string[]): Promise<string[]>;
}

/** Failure counts and dead letters; every call runs outside the handler's transaction. */
export interface ConsumerFailureStore {
  /** Counts one failure of `(consumer, eventId)`; returns the failures so far, this one included. */
  recordFailure(
    consumer: string,
    eventId: string,
    failure: { at: Date; error: string },
    message: ConsumedMessage,
  ): Promise<number>;
  /** Forgets the failures of an event that then succeeded (best effort). */
  clearFailures(consumer: string, eventId: string): Promise<void>;
  /** Records a message the consumer gives up on. Idempotent for the same message. */
  deadLetter(letter: DeadLetter): Promise<void>;
}

export interface DeadLetterPublisher {
  publish(topic: string, letter: DeadLetter): Promise<void>;
}

/** The transaction runner, as the consume flow uses it. */
export type ConsumerTransactionRunner = Pick<TransactionRunner, 'run' | 'currentSession'>;

export type FlowLogger = Pick<Logger, 'debug' | 'log' | 'warn' | 'error'>;

export type ConsumeOutcome =
  | { kind: 'applied'; result: unknown }
  | { kind: 'duplicate'; eventId: string }
  | { kind: 'dead-lettered'; eventId: string | null; reason: DeadLetterReason };

/** MongoDB duplicate key (E11000), as the driver or Mongoose surfaces it. */
export function isDuplicateKeyError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; writeErrors?: Array<{ code?: unknown }> };
  return e.code === 11000 || e.code === 11001 || e.writeErrors?.[0]?.code === 11000;
}
