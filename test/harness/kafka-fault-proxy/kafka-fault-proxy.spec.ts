import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { FrameReader } from './kafka-frames';
import { KafkaFaultProxy } from './kafka-fault-proxy';

/** A stand-in broker: answers every request frame with its correlation id and the request's body. */
async function echoBroker(): Promise<{ server: Server; port: number; received: Buffer[] }> {
  const received: Buffer[] = [];
  const server = createServer((socket) => {
    const reader = new FrameReader();
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        received.push(frame);
        const body = frame.subarray(12);
        const response = Buffer.alloc(8 + body.length);
        response.writeInt32BE(4 + body.length, 0);
        response.writeInt32BE(frame.readInt32BE(8), 4);
        body.copy(response, 8);
        socket.write(response);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, received };
}

function request(apiKey: number, correlationId: number, body: string): Buffer {
  const frame = Buffer.alloc(12 + body.length);
  frame.writeInt32BE(8 + body.length, 0);
  frame.writeInt16BE(apiKey, 4);
  frame.writeInt16BE(3, 6);
  frame.writeInt32BE(correlationId, 8);
  frame.write(body, 12);
  return frame;
}

/** A client socket that collects response correlation ids and notices the close. */
async function client(port: number) {
  const socket: Socket = connect({ host: '127.0.0.1', port });
  const answered: number[] = [];
  const reader = new FrameReader();
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    for (const frame of reader.push(chunk)) answered.push(frame.readInt32BE(4));
  });
  socket.on('error', () => undefined);
  const closedPromise = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, answered, closed: () => closed, whenClosed: closedPromise };
}

const until = async (condition: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('KafkaFaultProxy on a stand-in broker (loopback)', () => {
  let broker: Awaited<ReturnType<typeof echoBroker>>;
  let proxy: KafkaFaultProxy;

  beforeEach(async () => {
    broker = await echoBroker();
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const listenPort = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    proxy = await KafkaFaultProxy.start({ listenPort, targetPort: broker.port });
  });
  afterEach(async () => {
    await proxy.close();
    await new Promise((resolve) => broker.server.close(resolve));
  });

  it('forwards requests and responses untouched, counting them by kind', async () => {
    const c = await client(proxy.options.listenPort);
    c.socket.write(Buffer.concat([request(3, 1, 'm'), request(0, 2, 'topic-a')]));
    await until(() => c.answered.length === 2);
    expect(c.answered).toEqual([1, 2]);
    expect(proxy.stats().requests).toEqual({ Metadata: 1, Produce: 1 });
    c.socket.destroy();
  });

  it('drop-response-then-close: the broker gets the request, the client no answer and a close', async () => {
    const fault = proxy.arm({
      api: 'Produce',
      topic: 'topic-b',
      action: 'drop-response-then-close',
    });
    const c = await client(proxy.options.listenPort);
    c.socket.write(request(0, 1, 'topic-a'));
    await until(() => c.answered.length === 1);
    c.socket.write(request(0, 2, 'xx topic-b xx'));
    await c.whenClosed;
    expect(c.answered).toEqual([1]);
    expect(broker.received.map((frame) => frame.readInt32BE(8))).toEqual([1, 2]);
    expect(fault.fired).toBe(1);
    expect(fault.armed).toBe(false);
    expect(proxy.stats().droppedResponses).toBe(1);
  });

  it('delay-response holds that response and those behind it', async () => {
    proxy.arm({ api: 'Produce', action: 'delay-response', delayMs: 300 });
    const c = await client(proxy.options.listenPort);
    const start = Date.now();
    c.socket.write(Buffer.concat([request(0, 1, 'p'), request(3, 2, 'm')]));
    await until(() => c.answered.length === 2);
    expect(Date.now() - start).toBeGreaterThanOrEqual(280);
    expect(c.answered).toEqual([1, 2]);
    c.socket.destroy();
  });

  it('cut-request forwards part of the request, then closes: the broker never gets it whole', async () => {
    const fault = proxy.arm({ api: 'Produce', action: 'cut-request', forwardBytes: 6, after: 1 });
    const c = await client(proxy.options.listenPort);
    c.socket.write(request(0, 1, 'first'));
    await until(() => c.answered.length === 1);
    c.socket.write(request(0, 2, 'second'));
    await c.whenClosed;
    expect(broker.received.map((frame) => frame.readInt32BE(8))).toEqual([1]);
    expect(fault.fired).toBe(1);
  });

  it('refuse-connections closes new connections at once, as many times as armed', async () => {
    proxy.arm({ action: 'refuse-connections', times: 2 });
    for (let i = 0; i < 2; i++) {
      const c = await client(proxy.options.listenPort);
      await c.whenClosed;
    }
    const c = await client(proxy.options.listenPort);
    c.socket.write(request(18, 9, 'v'));
    await until(() => c.answered.length === 1);
    expect(proxy.stats()).toMatchObject({ refused: 2, accepted: 1 });
    c.socket.destroy();
  });
});
