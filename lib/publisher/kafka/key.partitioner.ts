/**
 * The partition of a keyed message: Kafka's default partitioner, `toPositive(murmur2(key)) %
 * partitions` over the key's UTF-8 bytes (Java client `Utils.murmur2`; kafkajs'
 * `Partitioners.DefaultPartitioner` and the consumers' side compute the same). In 32-bit integer
 * arithmetic (`Math.imul`): kafkajs' own version works on 64-bit `Long`s and costs several times
 * more per message. `key.partitioner.spec.ts` pins equality with kafkajs' partitioner.
 */
export function partitionOfKey(key: string, partitions: number): number {
  const hash = isShortAscii(key) ? murmur2(scratch, key.length) : murmur2(Buffer.from(key, 'utf8'));
  return (hash & 0x7fffffff) % partitions;
}

/** The bytes of a short ASCII key (most keys), reused by every call: no buffer per message. */
const scratch = new Uint8Array(64);

function isShortAscii(key: string): boolean {
  if (key.length > scratch.length) return false;
  for (let i = 0; i < key.length; i++) if ((scratch[i] = key.charCodeAt(i)) > 0x7f) return false;
  return true;
}

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** MurmurHash2, 32-bit, with Kafka's seed; a signed 32-bit result as Java's. */
function murmur2(data: Uint8Array, length = data.length): number {
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3;
  if (tail > 0) {
    if (tail === 3) h ^= data[whole + 2] << 16;
    if (tail >= 2) h ^= data[whole + 1] << 8;
    h ^= data[whole];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}
