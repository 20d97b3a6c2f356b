import { Partitioners } from 'kafkajs';
import type { PartitionMetadata } from 'kafkajs';
import { partitionOfKey } from './key.partitioner';

const metadata = (count: number): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [],
    isr: [],
  }));

/** Keys of every length 0-40 (each murmur2 tail), ASCII and not (2-, 3- and 4-byte UTF-8). */
function keys(): string[] {
  const alphabet = ['a', 'Z', '7', '-', '.', 'é', 'ß', '€', '中', '😀', '\u0000', '\u007f'];
  let seed = 20261201;
  const random = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const list = ['', 'agg-1', 'Order-0001', 'a'.repeat(1000)];
  for (let length = 0; length <= 40; length++) {
    for (let k = 0; k < 60; k++) {
      let key = '';
      for (let i = 0; i < length; i++) key += alphabet[random(alphabet.length)];
      list.push(key);
    }
  }
  return list;
}

describe('partitionOfKey (Kafka default partitioner)', () => {
  it('puts every key where kafkajs DefaultPartitioner puts it', () => {
    const partitioner = Partitioners.DefaultPartitioner();
    for (const count of [1, 2, 3, 6, 7, 16, 100]) {
      const partitionMetadata = metadata(count);
      for (const key of keys()) {
        const expected = partitioner({
          topic: 't',
          partitionMetadata,
          message: { key, value: '' },
        });
        expect([key, count, partitionOfKey(key, count)]).toEqual([key, count, expected]);
      }
    }
  });
});
