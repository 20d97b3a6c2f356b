/* A child process that runs `PlatformaticKafkaSender` for the contract suite: Jest's module
 * sandbox cannot load `@platformatic/kafka` (an ES module) on Node.js < 24.9, Node's own
 * `require` can. Driven over IPC by `ChildPlatformaticSender` (platformatic-ports.ts). */
import { PlatformaticKafkaSender } from '../../../lib/publisher/platformatic/platformatic-kafka.sender';
import type { PlatformaticKafkaSenderOptions } from '../../../lib/publisher/platformatic/platformatic-kafka.sender';
import type { TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';

export type ChildRequest =
  | { id: number; sender: number; op: 'create'; options: PlatformaticKafkaSenderOptions }
  | { id: number; sender: number; op: 'connect' | 'disconnect' | 'replaceProducer' }
  | { id: number; sender: number; op: 'skewClock'; ms: number }
  | { id: number; sender: number; op: 'partitionCount'; topic: string }
  | { id: number; sender: number; op: 'send'; batches: TopicBatch[]; aborted: boolean };

/** An error as the classifier reads it: name, protocol type, inner errors. */
export interface SerializedError {
  name: string;
  message: string;
  type?: string;
  retriable?: boolean;
  errors?: SerializedError[];
  cause?: SerializedError;
}

export type ChildReply = { id: number; value?: unknown } | { id: number; error: SerializedError };

function serialize(value: unknown, depth = 0): SerializedError {
  if (value === null || typeof value !== 'object') return { name: 'Error', message: String(value) };
  const error = value as Record<string, unknown>;
  const out: SerializedError = {
    name: typeof error.name === 'string' ? error.name : 'Error',
    message: typeof error.message === 'string' ? error.message : String(value),
  };
  if (typeof error.type === 'string') out.type = error.type;
  if (typeof error.retriable === 'boolean') out.retriable = error.retriable;
  if (depth < 8 && Array.isArray(error.errors)) {
    out.errors = error.errors.map((inner: unknown) => serialize(inner, depth + 1));
  }
  if (depth < 8 && error.cause !== undefined) out.cause = serialize(error.cause, depth + 1);
  return out;
}

const senders = new Map<number, PlatformaticKafkaSender>();

/** This process's clock, before `skewClock` shifts it (the client stamps records with it). */
const realNow = Date.now.bind(Date);

async function handle(request: ChildRequest): Promise<unknown> {
  if (request.op === 'create') {
    senders.set(request.sender, new PlatformaticKafkaSender(request.options));
    return undefined;
  }
  if (request.op === 'skewClock') {
    Date.now = request.ms === 0 ? realNow : () => realNow() + request.ms;
    return undefined;
  }
  const sender = senders.get(request.sender);
  if (!sender) throw new Error(`no sender ${request.sender}`);
  switch (request.op) {
    case 'connect':
      return sender.connect();
    case 'disconnect':
      senders.delete(request.sender);
      return sender.disconnect();
    case 'replaceProducer':
      return sender.replaceProducer();
    case 'partitionCount':
      return sender.partitionCount(request.topic);
    case 'send': {
      const controller = new AbortController();
      if (request.aborted) controller.abort();
      return sender.send(request.batches, controller.signal);
    }
  }
}

process.on('message', (request: ChildRequest) => {
  handle(request).then(
    (value) => process.send?.({ id: request.id, value } satisfies ChildReply),
    (error: unknown) =>
      process.send?.({ id: request.id, error: serialize(error) } satisfies ChildReply),
  );
});
process.on('disconnect', () => {
  void Promise.all([...senders.values()].map((sender) => sender.disconnect())).then(() =>
    process.exit(0),
  );
});
