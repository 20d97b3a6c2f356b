import { Types } from 'mongoose';
import { idAfter } from './id-after';

/** An ObjectId of `second` with `process` (5 bytes) and `counter` (3 bytes), as two writers make them. */
function id(second: number, process: number, counter: number): Types.ObjectId {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(second, 0);
  bytes.writeUIntBE(process, 4, 5);
  bytes.writeUIntBE(counter, 9, 3);
  return new Types.ObjectId(bytes);
}
const hex = (value: Types.ObjectId) => value.toHexString();

describe('idAfter: an _id that sorts after the one an event waits for', () => {
  const second = 1_800_000_000;

  it('a fresh id already after it is kept', () => {
    const fresh = id(second, 5, 1);
    expect(idAfter(id(second, 4, 9), fresh)).toBe(fresh);
  });

  it("pod 2's id made in the same second as pod 1's, with a smaller process part, sorts after it", () => {
    const pod1 = id(second, 0xffffffff, 7);
    const pod2 = id(second, 0x10, 3);
    expect(hex(pod2) < hex(pod1)).toBe(true); // what ObjectIds alone would give: before
    const after = idAfter(pod1, pod2);
    expect(hex(after) > hex(pod1)).toBe(true);
    expect(hex(after).slice(8)).toBe(hex(pod2).slice(8)); // this process's part and counter
  });

  it('an id of an earlier second (a clock behind) moves to the waited-for second, or the next', () => {
    const last = id(second, 0x20, 1);
    expect(hex(idAfter(last, id(second - 3, 0x30, 1)))).toBe(hex(id(second, 0x30, 1)));
    expect(hex(idAfter(last, id(second - 3, 0x10, 1)))).toBe(hex(id(second + 1, 0x10, 1)));
  });
});
