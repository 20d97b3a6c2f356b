/**
 * Kafka's framing, as much of it as the fault proxy reads. Every request and every response is
 * one frame: an int32 size (big-endian, not counting itself), then that many bytes. A request's
 * header starts with apiKey (int16), apiVersion (int16) and correlationId (int32), in every
 * version; a response's body starts with the correlationId of the request it answers (int32).
 * The rest (client id, tagged fields, the body) is never decoded.
 */

/** The request kinds the tests arm faults on, by name (Kafka's `ApiKeys`). */
export const API_KEYS = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  FindCoordinator: 10,
  ApiVersions: 18,
  CreateTopics: 19,
  InitProducerId: 22,
  DescribeConfigs: 32,
  CreatePartitions: 37,
} as const;

export type ApiName = keyof typeof API_KEYS;

/** Bytes before a request's correlation id: size (4) + apiKey (2) + apiVersion (2). */
const REQUEST_HEADER_BYTES = 12;

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
}

/** The header of a whole request frame (size prefix included). */
export function requestHeader(frame: Buffer): RequestHeader {
  if (frame.length < REQUEST_HEADER_BYTES) {
    throw new Error(`a request frame of ${frame.length} bytes has no header`);
  }
  return {
    apiKey: frame.readInt16BE(4),
    apiVersion: frame.readInt16BE(6),
    correlationId: frame.readInt32BE(8),
  };
}

/** The correlation id of a whole response frame (size prefix included). */
export function responseCorrelationId(frame: Buffer): number {
  if (frame.length < 8) throw new Error(`a response frame of ${frame.length} bytes has no header`);
  return frame.readInt32BE(4);
}

/** The name of `apiKey` when it is one of `API_KEYS`, else the number as text. */
export function apiName(apiKey: number): string {
  const entry = Object.entries(API_KEYS).find(([, key]) => key === apiKey);
  return entry ? entry[0] : String(apiKey);
}

/**
 * Cuts a byte stream into whole frames: `push` takes whatever the socket delivered (part of a
 * frame, several frames, both) and returns the frames it completed, each with its size prefix,
 * in order; the bytes of an unfinished frame wait for the next chunk.
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes = 256 * 1024 * 1024) {}

  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Buffer[] = [];
    let start = 0;
    while (this.buffered.length - start >= 4) {
      const size = this.buffered.readInt32BE(start);
      if (size < 0 || size > this.maxFrameBytes) {
        throw new Error(`a frame announces ${size} bytes: not Kafka's framing`);
      }
      if (this.buffered.length - start < 4 + size) break;
      frames.push(this.buffered.subarray(start, start + 4 + size));
      start += 4 + size;
    }
    // Copied, so that a kept remainder does not pin the whole chunk it came in.
    this.buffered = start === 0 ? this.buffered : Buffer.from(this.buffered.subarray(start));
    return frames;
  }

  /** Bytes of an unfinished frame waiting for the rest. */
  get pendingBytes(): number {
    return this.buffered.length;
  }
}
