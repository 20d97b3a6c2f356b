import { mongo } from 'mongoose';
import {
  DUE_CLOCK_ID,
  MAJORITY_WRITE_TIME_WTIMEOUT_MS,
  majorityWriteTime,
} from './relay-collections';

describe('majorityWriteTime', () => {
  const localTime = new Date('2026-12-06T12:00:00.250Z');
  const db = { command: () => Promise.resolve({ localTime }) } as unknown as mongo.Db;

  it("answers the primary's time once its majority write is acknowledged, waiting for it at most MAJORITY_WRITE_TIME_WTIMEOUT_MS", async () => {
    const updateOne = jest.fn().mockResolvedValue({ acknowledged: true });
    const state = { updateOne } as unknown as mongo.Collection<{ _id: string }>;
    await expect(majorityWriteTime(db, state)).resolves.toEqual(localTime);
    const [filter, , options] = updateOne.mock.calls[0] as [unknown, unknown, mongo.UpdateOptions];
    expect(filter).toEqual({ _id: DUE_CLOCK_ID });
    expect(options.writeConcern).toEqual({
      w: 'majority',
      wtimeoutMS: MAJORITY_WRITE_TIME_WTIMEOUT_MS,
    });
  });
});
