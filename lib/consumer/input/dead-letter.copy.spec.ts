import { createHash } from 'node:crypto';
import type { ConsumedMessage } from './consumed-message';
import { deadLetterCopy, DEAD_LETTER_HEADER_LIMITS } from './dead-letter.copy';

const message = (value: unknown, headers: Record<string, string> = {}): ConsumedMessage => ({
  topic: 'Order',
  partition: 0,
  offset: '1',
  key: 'o-1',
  headers,
  decodedHeaders: [],
  value,
  rawValue: Buffer.isBuffer(value),
});
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('dead-letter copy of a message', () => {
  it('keeps a small value whole, with its size and hash', () => {
    const value = Buffer.from('{"n":1}');
    expect(deadLetterCopy(message(value, { ce_id: 'e-1' }), 1024)).toEqual({
      key: 'o-1',
      headers: [{ key: 'ce_id', value: 'e-1' }],
      value: '{"n":1}',
      valueEncoding: 'utf8',
      valueBytes: 7,
      valueSha256: sha(value),
      valueTruncated: false,
      valueExact: true,
    });
  });

  // Defect 1: a value over 16 MB made the dead-letter document impossible to write.
  it('truncates a large value, keeping the size and hash of the whole', () => {
    const value = Buffer.from('x'.repeat(17 * 1024 * 1024));
    const copy = deadLetterCopy(message(value), 512 * 1024);
    expect(copy).toMatchObject({
      valueBytes: value.length,
      valueSha256: sha(value),
      valueTruncated: true,
      valueEncoding: 'utf8',
    });
    expect(copy.value).toHaveLength(512 * 1024);
  });

  it('never cuts a UTF-8 character in two', () => {
    const value = Buffer.from('aé'.repeat(10)); // "é" is 2 bytes
    const copy = deadLetterCopy(message(value), 5); // byte 5 is inside the second "é"
    expect(copy.value).toBe('aéa');
    expect(copy.valueEncoding).toBe('utf8');
  });

  it('keeps bytes that are not UTF-8 as base64', () => {
    const value = Buffer.from([0, 0xff, 0xfe, 1]);
    expect(deadLetterCopy(message(value), 1024)).toMatchObject({
      value: value.toString('base64'),
      valueEncoding: 'base64',
      valueBytes: 4,
    });
  });

  it('bounds the headers', () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 100; i++) headers[`h${i}`] = 'v'.repeat(10_000);
    const copy = deadLetterCopy(message(null, headers), 1024);
    expect(copy.headers).toHaveLength(DEAD_LETTER_HEADER_LIMITS.count);
    expect(copy.headers[0].value).toHaveLength(DEAD_LETTER_HEADER_LIMITS.value);
    expect(copy).toMatchObject({ value: null, valueBytes: 0, valueSha256: null });
  });

  it('says when it holds a re-serialized value (no raw bytes kept)', () => {
    expect(deadLetterCopy(message({ n: 1 }), 1024)).toMatchObject({
      value: '{"n":1}',
      valueExact: false,
    });
  });
});
