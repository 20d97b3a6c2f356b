export * from './outbox-dead-letters.service';
export { OutboxConsumerDeadLetters } from './outbox-consumer-dead-letters.service';
export { DeadLetterFilterError } from './dead-letter.filter';
export type { DeadLetterFilter } from './dead-letter.filter';
export type { DeadLetterPurgeResult, DeadLetterRequeueResult } from './dead-letter.results';
