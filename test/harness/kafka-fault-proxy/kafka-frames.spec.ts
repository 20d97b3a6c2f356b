import { apiName, FrameReader, requestHeader, responseCorrelationId } from './kafka-frames';

/** A request frame: size, apiKey, apiVersion, correlationId, then `body`. */
function request(apiKey: number, correlationId: number, body = 'body'): Buffer {
  const payload = Buffer.alloc(8 + body.length);
  payload.writeInt16BE(apiKey, 0);
  payload.writeInt16BE(9, 2);
  payload.writeInt32BE(correlationId, 4);
  payload.write(body, 8);
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
}

describe('FrameReader (the fault proxy reading Kafka frames)', () => {
  it('returns a frame delivered whole, with its header', () => {
    const reader = new FrameReader();
    const [frame] = reader.push(request(0, 7));
    expect(requestHeader(frame)).toEqual({ apiKey: 0, apiVersion: 9, correlationId: 7 });
    expect(reader.pendingBytes).toBe(0);
  });

  it('joins a frame split across chunks, even inside its size prefix', () => {
    const reader = new FrameReader();
    const bytes = request(3, 42, 'a longer body');
    expect(reader.push(bytes.subarray(0, 2))).toEqual([]);
    expect(reader.push(bytes.subarray(2, 9))).toEqual([]);
    expect(reader.pendingBytes).toBe(9);
    const frames = reader.push(bytes.subarray(9));
    expect(frames).toHaveLength(1);
    expect(Buffer.compare(frames[0], bytes)).toBe(0);
    expect(requestHeader(frames[0]).correlationId).toBe(42);
  });

  it('returns every frame of a chunk in order, keeping a trailing part for later', () => {
    const reader = new FrameReader();
    const a = request(0, 1, 'a');
    const b = request(22, 2, 'bb');
    const c = request(3, 3, 'ccc');
    const frames = reader.push(Buffer.concat([a, b, c.subarray(0, 5)]));
    expect(frames.map((frame) => requestHeader(frame).correlationId)).toEqual([1, 2]);
    expect(reader.push(c.subarray(5)).map((frame) => requestHeader(frame).apiKey)).toEqual([3]);
  });

  it('reads the correlation id of a response and names request kinds', () => {
    const response = Buffer.alloc(10);
    response.writeInt32BE(6, 0);
    response.writeInt32BE(1234, 4);
    expect(responseCorrelationId(response)).toBe(1234);
    expect(apiName(0)).toBe('Produce');
    expect(apiName(22)).toBe('InitProducerId');
    expect(apiName(999)).toBe('999');
  });

  it('refuses a stream that is not Kafka framing (negative size)', () => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(-5);
    expect(() => new FrameReader().push(bytes)).toThrow(/not Kafka's framing/);
  });
});
