export const SEQUENCES_COLLECTION = 'outbox_sequences'; // the option's default

/** One aggregate's counter (option `aggregateSequence`): `_id` is `<aggregateType>/<aggregateId>`. */
export interface SequenceCounterDoc {
  _id: string;
  sequence: number; // the last one drawn
}
