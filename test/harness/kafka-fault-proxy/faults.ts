import { API_KEYS } from './kafka-frames';
import type { ApiName, RequestHeader } from './kafka-frames';

/**
 * What the proxy can do to the traffic:
 * - `drop-response-then-close`: forwards the request, drops the broker's response, then closes
 *   the connection: the ambiguous ack (the broker stored, the client never hears).
 * - `delay-response`: forwards the request and holds its response `delayMs` (the responses
 *   behind it on that connection wait too: Kafka answers a connection's requests in order).
 * - `cut-request`: forwards the first `forwardBytes` bytes of the request (default none, at most
 *   all but its last byte), then closes the connection: the broker never gets the whole request.
 * - `refuse-connections`: accepts a new connection and closes it at once.
 */
export type FaultAction =
  'drop-response-then-close' | 'delay-response' | 'cut-request' | 'refuse-connections';

export interface FaultSpec {
  action: FaultAction;
  /** The request kind it applies to (every kind when unset); ignored by `refuse-connections`. */
  api?: ApiName;
  /**
   * Only requests whose bytes contain this topic name. The name is searched in the raw request
   * rather than decoded: simpler than following every version's (flexible) encoding, and exact
   * enough for the tests' unique topic names.
   */
  topic?: string;
  /** `delay-response`: how long the response is held, ms. */
  delayMs?: number;
  /** `cut-request`: bytes of the request forwarded before the close. Default 0. */
  forwardBytes?: number;
  /** How many times it fires before it disarms itself. Default 1; `Infinity` until `disarm()`. */
  times?: number;
  /** Matching requests (or connections) let through before it first fires. Default 0. */
  after?: number;
}

/** One firing, for the test's report and assertions. */
export interface FaultFiring {
  action: FaultAction;
  api?: string;
  correlationId?: number;
  at: number;
}

/** A fault armed on the proxy; `fired` counts what it really did. */
export class ArmedFault {
  fired = 0;
  private skipped = 0;
  private disarmed = false;
  private readonly topicBytes?: Buffer;

  constructor(readonly spec: FaultSpec) {
    if (spec.action !== 'refuse-connections' && spec.api && !(spec.api in API_KEYS)) {
      throw new Error(`unknown request kind ${spec.api}`);
    }
    this.topicBytes = spec.topic === undefined ? undefined : Buffer.from(spec.topic, 'utf8');
  }

  get armed(): boolean {
    return !this.disarmed && this.fired < (this.spec.times ?? 1);
  }

  disarm(): void {
    this.disarmed = true;
  }

  /** Whether it fires on this request (counting it when it does). */
  takesRequest(header: RequestHeader, frame: Buffer): boolean {
    if (!this.armed || this.spec.action === 'refuse-connections') return false;
    if (this.spec.api !== undefined && API_KEYS[this.spec.api] !== header.apiKey) return false;
    if (this.topicBytes && frame.indexOf(this.topicBytes) < 0) return false;
    return this.take();
  }

  /** Whether it refuses this new connection (counting it when it does). */
  takesConnection(): boolean {
    return this.armed && this.spec.action === 'refuse-connections' && this.take();
  }

  private take(): boolean {
    if (this.skipped < (this.spec.after ?? 0)) {
      this.skipped++;
      return false;
    }
    this.fired++;
    return true;
  }
}

/** The faults armed on one proxy, first armed first considered, and every firing. */
export class FaultBook {
  private readonly faults: ArmedFault[] = [];
  readonly firings: FaultFiring[] = [];

  arm(spec: FaultSpec): ArmedFault {
    const fault = new ArmedFault(spec);
    this.faults.push(fault);
    return fault;
  }

  disarmAll(): void {
    for (const fault of this.faults) fault.disarm();
  }

  forRequest(header: RequestHeader, frame: Buffer, api: string): ArmedFault | undefined {
    const fault = this.faults.find((candidate) => candidate.takesRequest(header, frame));
    if (fault) {
      this.firings.push({
        action: fault.spec.action,
        api,
        correlationId: header.correlationId,
        at: Date.now(),
      });
    }
    return fault;
  }

  forConnection(): ArmedFault | undefined {
    const fault = this.faults.find((candidate) => candidate.takesConnection());
    if (fault) this.firings.push({ action: fault.spec.action, at: Date.now() });
    return fault;
  }
}
