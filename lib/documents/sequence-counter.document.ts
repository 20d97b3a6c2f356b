/** Default of `collections.sequences`. */
export const SEQUENCES_COLLECTION = 'outbox_sequences';

/** One aggregate's counter (option `aggregateSequence`): `_id` is `<aggregateType>/<aggregateId>`. */
export interface SequenceCounterDoc {
  _id: string;
  /** The last sequence number drawn. */
  sequence: number;
}
