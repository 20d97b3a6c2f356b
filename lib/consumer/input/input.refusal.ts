import type { DeadLetterReason } from '../../documents/consumer-dead-letter.document';

/** A message refused on input (it is dead-lettered, never retried): why, and what is wrong. */
export interface InputRefusal<R extends DeadLetterReason> {
  ok: false;
  reason: R;
  detail: string;
}

export function refuse<R extends DeadLetterReason>(reason: R, detail: string): InputRefusal<R> {
  return { ok: false, reason, detail };
}
