import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { FaultBook } from './faults';
import type { ArmedFault, FaultFiring, FaultSpec } from './faults';
import { ProxyConnection } from './proxy-connection';
import type { TrafficCounts } from './proxy-connection';

export interface KafkaFaultProxyOptions {
  /** The port clients connect to (the broker's fault listener advertises it). */
  listenPort: number;
  /** The broker listener the proxy forwards to, on 127.0.0.1. */
  targetPort: number;
}

/**
 * A TCP proxy on 127.0.0.1 between Kafka clients and one broker listener, reading Kafka's frames
 * and correlation ids so that a test can break one kind of request (and topic) on demand: see
 * `FaultAction`. Clients bootstrap on `listenPort`; the broker listener behind it advertises that
 * same port, so every connection the clients open afterwards goes through the proxy too.
 *
 *   const proxy = await KafkaFaultProxy.start({ listenPort, targetPort });
 *   const fault = proxy.arm({ api: 'Produce', topic, action: 'drop-response-then-close' });
 *   ... send ...; expect(fault.fired).toBe(1);
 *   await proxy.close();
 */
export class KafkaFaultProxy {
  private readonly book = new FaultBook();
  private readonly connections = new Set<ProxyConnection>();
  private readonly traffic: TrafficCounts = {
    requests: new Map(),
    responses: 0,
    droppedResponses: 0,
  };
  private accepted = 0;
  private refused = 0;

  private constructor(
    private readonly server: Server,
    readonly options: KafkaFaultProxyOptions,
  ) {
    server.on('connection', (socket) => {
      if (this.book.forConnection()) {
        this.refused++;
        socket.destroy();
        return;
      }
      this.accepted++;
      const connection = new ProxyConnection(
        socket,
        { host: '127.0.0.1', port: options.targetPort },
        this.book,
        this.traffic,
        (closed) => this.connections.delete(closed),
      );
      this.connections.add(connection);
    });
  }

  static async start(options: KafkaFaultProxyOptions): Promise<KafkaFaultProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listenPort, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new KafkaFaultProxy(server, options);
  }

  /** The address clients bootstrap on. */
  get broker(): string {
    return `127.0.0.1:${this.options.listenPort}`;
  }

  arm(spec: FaultSpec): ArmedFault {
    return this.book.arm(spec);
  }

  disarmAll(): void {
    this.book.disarmAll();
  }

  /** Closes every open connection (clients see the broker go away and reconnect). */
  cutAll(): void {
    for (const connection of [...this.connections]) connection.close();
  }

  /** What the proxy saw and did so far. */
  stats(): {
    accepted: number;
    refused: number;
    open: number;
    requests: Record<string, number>;
    responses: number;
    droppedResponses: number;
    firings: readonly FaultFiring[];
  } {
    return {
      accepted: this.accepted,
      refused: this.refused,
      open: this.connections.size,
      requests: Object.fromEntries(this.traffic.requests),
      responses: this.traffic.responses,
      droppedResponses: this.traffic.droppedResponses,
      firings: this.book.firings,
    };
  }

  /** Stops listening and closes every connection; faults are disarmed. */
  async close(): Promise<void> {
    this.book.disarmAll();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.cutAll();
    await closed;
  }
}
