import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SendAbortedError } from '../../../lib/publisher/kafka/kafka.sender';
import type { KafkaSender, TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';
import { createTopics, testKafka, testServers, uniqueName } from '../../harness';
import { CONTRACT_MESSAGE_MAX_BYTES } from '../kafka.sender.contract';
import type { KafkaSenderFixture } from '../kafka.sender.contract';
import { storedOn, UNREACHABLE_BROKER } from './kafka-ports';
import type { PlatformaticKafkaSenderOptions } from '../../../lib/publisher/platformatic/platformatic-kafka.sender';
import type { ChildReply, ChildRequest, SerializedError } from './platformatic-sender.child';

type Request = ChildRequest extends infer R
  ? R extends ChildRequest
    ? Omit<R, 'id' | 'sender'>
    : never
  : never;

/** The child process running the real senders (see platformatic-sender.child.ts), one per spec file. */
let child: ChildProcess | undefined;
let nextId = 0;
const pending = new Map<number, (reply: ChildReply) => void>();

function startChild(): ChildProcess {
  if (child) return child;
  child = fork(join(__dirname, 'platformatic-sender.child.ts'), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (reply: ChildReply) => {
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  child.on('exit', (code) => {
    for (const resolve of pending.values()) {
      resolve({ id: -1, error: { name: 'Error', message: `sender child exited (${code})` } });
    }
    pending.clear();
    child = undefined;
  });
  return child;
}

/** Ends the child process (the spec's `afterAll`). */
export function stopPlatformaticChild(): void {
  child?.disconnect();
}

/** The child's error rebuilt as the classifier and the contract read it. */
function rebuild(serialized: SerializedError): Error {
  if (serialized.name === 'SendAbortedError') return new SendAbortedError();
  const error = Object.assign(new Error(serialized.message), {
    name: serialized.name,
    type: serialized.type,
    retriable: serialized.retriable,
    errors: serialized.errors?.map(rebuild),
    cause: serialized.cause ? rebuild(serialized.cause) : undefined,
  });
  return error;
}

/** A `KafkaSender` whose calls run in the child, on a `PlatformaticKafkaSender`. */
class ChildPlatformaticSender implements KafkaSender {
  private static next = 0;
  private readonly sender = ++ChildPlatformaticSender.next;

  private call(request: Request): Promise<unknown> {
    const process = startChild();
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      pending.set(id, (reply) =>
        'error' in reply ? reject(rebuild(reply.error)) : resolve(reply.value),
      );
      process.send({ ...request, id, sender: this.sender });
    });
  }

  async create(options: PlatformaticKafkaSenderOptions): Promise<this> {
    await this.call({ op: 'create', options });
    return this;
  }

  async connect(): Promise<void> {
    await this.call({ op: 'connect' });
  }

  async partitionCount(topic: string): Promise<number> {
    return (await this.call({ op: 'partitionCount', topic })) as number;
  }

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    await this.call({ op: 'send', batches: [...batches], aborted: signal?.aborted ?? false });
  }

  async replaceProducer(): Promise<void> {}

  async disconnect(): Promise<void> {
    await this.call({ op: 'disconnect' }).catch(() => undefined);
  }
}

/**
 * `PlatformaticKafkaSender` (lib/publisher/platformatic) on the run's broker, with a fresh
 * topic. It runs in a child process: the suite drives it over IPC and reads its errors' name,
 * type and inner errors, all the classifier reads.
 */
export async function platformaticSenderFixture(): Promise<KafkaSenderFixture> {
  const topic = uniqueName('contract-sender');
  await createTopics([topic], 2, { 'max.message.bytes': String(CONTRACT_MESSAGE_MAX_BYTES) });
  const sender = await new ChildPlatformaticSender().create({
    brokers: testServers().kafkaBrokers,
    clientId: 'outbox-contract',
    retry: { retries: 2, initialRetryTime: 50, maxRetryTime: 200 },
  });
  return {
    sender,
    topic,
    missingTopic: uniqueName('contract-missing'),
    stored: storedOn,
    unreachable: () =>
      new ChildPlatformaticSender().create({
        brokers: [UNREACHABLE_BROKER],
        clientId: 'outbox-contract',
        connectionTimeout: 300,
        retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
      }),
    close: async () => {
      const admin = testKafka('outbox-contract-admin').admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
