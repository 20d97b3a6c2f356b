import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { FaultBook } from './faults';
import { apiName, FrameReader, requestHeader, responseCorrelationId } from './kafka-frames';

/** What happens to the response of one request. */
type ResponsePlan =
  { kind: 'forward' } | { kind: 'drop-then-close' } | { kind: 'delay'; ms: number };

/** What a connection counts, summed by the proxy. */
export interface TrafficCounts {
  requests: Map<string, number>;
  responses: number;
  droppedResponses: number;
}

/**
 * One client connection and its own connection to the broker. Requests go through whole (a
 * frame at a time), each remembered by correlation id with what to do to its response; responses
 * go back in the order the broker sent them (a delayed one holds those behind it, as a slow
 * broker would). Either side closing or failing closes both.
 */
export class ProxyConnection {
  private readonly upstream: Socket;
  private readonly requests = new FrameReader();
  private readonly responses = new FrameReader();
  private readonly plans = new Map<number, ResponsePlan>();
  private output: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly client: Socket,
    target: { host: string; port: number },
    private readonly book: FaultBook,
    private readonly counts: TrafficCounts,
    private readonly onClose: (connection: ProxyConnection) => void,
  ) {
    client.setNoDelay(true);
    // Writes before the connection is up are queued by the socket.
    this.upstream = connect({ host: target.host, port: target.port });
    this.upstream.setNoDelay(true);
    client.on('data', (chunk: Buffer) => this.fromClient(chunk));
    this.upstream.on('data', (chunk: Buffer) => this.fromBroker(chunk));
    for (const socket of [client, this.upstream]) {
      socket.on('error', () => this.close());
      socket.on('close', () => this.close());
    }
  }

  /** Closes both sides at once (no response still held is delivered). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    this.upstream.destroy();
    this.onClose(this);
  }

  private fromClient(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.requests.push(chunk);
    } catch {
      return this.close();
    }
    for (const frame of frames) {
      if (this.closed) return;
      const header = requestHeader(frame);
      const api = apiName(header.apiKey);
      this.counts.requests.set(api, (this.counts.requests.get(api) ?? 0) + 1);
      const fault = this.book.forRequest(header, frame, api);
      const action = fault?.spec.action;
      if (action === 'cut-request') {
        const bytes = Math.min(fault!.spec.forwardBytes ?? 0, frame.length - 1);
        // `end` flushes the part before closing the broker's side.
        this.upstream.end(frame.subarray(0, bytes));
        this.closed = true;
        this.client.destroy();
        this.onClose(this);
        return;
      }
      this.plans.set(
        header.correlationId,
        action === 'drop-response-then-close'
          ? { kind: 'drop-then-close' }
          : action === 'delay-response'
            ? { kind: 'delay', ms: fault!.spec.delayMs ?? 0 }
            : { kind: 'forward' },
      );
      this.upstream.write(frame);
    }
  }

  private fromBroker(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.responses.push(chunk);
    } catch {
      return this.close();
    }
    for (const frame of frames) {
      if (this.closed) return;
      const correlationId = responseCorrelationId(frame);
      const plan = this.plans.get(correlationId) ?? { kind: 'forward' };
      this.plans.delete(correlationId);
      this.counts.responses++;
      if (plan.kind === 'drop-then-close') {
        this.counts.droppedResponses++;
        // The responses already queued for the client are dropped with it.
        return this.close();
      }
      const wait = plan.kind === 'delay' ? plan.ms : 0;
      this.output = this.output.then(async () => {
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
        if (!this.closed) this.client.write(frame);
      });
    }
  }
}
