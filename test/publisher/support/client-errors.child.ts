/**
 * Builds the errors kafkajs and @platformatic/kafka end a produce call with, for the same
 * sequence of broker answers, with the clients' own classes and the way their retry loops
 * assemble them, and prints how `classifyKafkaError` reads each (JSON on stdout). A child
 * process: @platformatic/kafka is an ES module, which Node's `require` loads and Jest's does not.
 *
 * Run: node -r ts-node/register/transpile-only client-errors.child.ts '<scenarios as JSON>'
 */
import { KafkaJSConnectionError } from 'kafkajs';
import * as kafkajs from 'kafkajs';
import { classifyKafkaError } from '../../../lib/publisher/kafka/kafka-error.classifier';
import { asKafkajsError } from '../../../lib/publisher/platformatic/platformatic-kafka.errors';

/**
 * One attempt's answer: the error codes of its failing partitions, a failed connection, or the
 * broker lacking the API version the client needs (the client fails before sending).
 */
export type Answer = number[] | 'network' | 'unsupported-api';

/** Answers, oldest first; `closed`: the client was closed while waiting to retry (platformatic). */
export interface Scenario {
  answers: Answer[];
  closed?: boolean;
}

export interface ClientErrorsReport {
  kafkajs: { scope: string; type?: string; attempts: number };
  platformatic: { scope: string; type?: string; attempts: number; message: string };
}

interface PlatformaticError extends Error {
  findBy(property: string, value: unknown): unknown;
}
interface PlatformaticErrors {
  NetworkError: new (message: string) => PlatformaticError;
  UnsupportedApiError: new (message: string) => PlatformaticError;
  UserError: new (message: string) => PlatformaticError;
  ResponseError: new (
    apiKey: number,
    apiVersion: number,
    errors: Record<string, [number, string | null]>,
    response: unknown,
  ) => PlatformaticError;
  MultipleErrors: new (message: string, errors: Error[]) => PlatformaticError;
}

const kafkajsProtocol = require('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): Error & { retriable: boolean; type: string };
  staleMetadata(error: unknown): boolean;
};
const createRetry = require('kafkajs/src/retry') as (
  options: object,
) => <T>(fn: (bail: (error: Error) => void) => Promise<T>) => Promise<T>;

/** Exported by kafkajs at runtime (src/errors.js), missing from its typings. */
const { KafkaJSServerDoesNotSupportApiKey } = kafkajs as unknown as {
  KafkaJSServerDoesNotSupportApiKey: new (message: string, meta: object) => Error;
};

/**
 * kafkajs: produce/v3/response.js `parse` throws the error of the first failing partition;
 * protocol/requests/index.js throws KafkaJSServerDoesNotSupportApiKey for an API the broker lacks.
 */
function kafkajsAnswer(answer: Answer): Error & { retriable?: boolean } {
  if (answer === 'unsupported-api') {
    return new KafkaJSServerDoesNotSupportApiKey(
      'The Kafka server does not support the requested API version',
      { apiKey: 0, apiName: 'Produce' },
    );
  }
  if (answer === 'network') {
    return new KafkaJSConnectionError('Connection error: read ECONNRESET', {
      broker: 'localhost:9092',
      code: 'ECONNRESET',
    } as never);
  }
  return kafkajsProtocol.createErrorFromCode(answer[0]);
}

/** kafkajs: producer/sendMessages.js's retrier callback, under retry/index.js. */
async function kafkajsError(
  answers: readonly Answer[],
): Promise<{ error: unknown; tried: number }> {
  const retrier = createRetry({
    retries: answers.length - 1,
    initialRetryTime: 1,
    maxRetryTime: 2,
  });
  let tried = 0;
  try {
    await retrier(async (bail) => {
      const error = kafkajsAnswer(answers[tried++]);
      // sendMessages.js: stale metadata, connection errors and retriable protocol errors are
      // thrown (retried), any other retriable error too, the rest bails.
      if (
        kafkajsProtocol.staleMetadata(error) ||
        error.name === 'KafkaJSConnectionError' ||
        (error.name === 'KafkaJSProtocolError' && error.retriable)
      ) {
        throw error;
      }
      if (error.retriable) throw error;
      bail(error);
    });
  } catch (error) {
    return { error, tried };
  }
  throw new Error('kafkajs resolved a send that every answer refused');
}

/**
 * @platformatic/kafka: a ResponseError (apis/producer/produce-v9.js), a NetworkError
 * (network/connection.js) or an UnsupportedApiError (clients/base/base.js `kGetApi`).
 */
function platformaticAnswer(plt: PlatformaticErrors, answer: Answer): PlatformaticError {
  if (answer === 'network') return new plt.NetworkError('Connection closed');
  if (answer === 'unsupported-api') return new plt.UnsupportedApiError('Unsupported API Produce.');
  const errors = Object.fromEntries(
    answer.map((code, j): [string, [number, null]] => [
      `/responses/0/partition_responses/${j}`,
      [code, null],
    ]),
  );
  return new plt.ResponseError(0, 9, errors, {});
}

/**
 * @platformatic/kafka: clients/base/base.js `kPerformWithRetry` retries while no error of the
 * chain has `canRetry: false`, and after more than one attempt fails with a MultipleErrors of
 * every attempt; clients/producer/producer.js `#performSend` runs one such call per leader
 * under apis/callbacks.js `runConcurrentCallbacks`, a MultipleErrors of the failed ones.
 */
function platformaticError(
  plt: PlatformaticErrors,
  { answers, closed }: Scenario,
): { error: Error; tried: number } {
  const attempts: PlatformaticError[] = [];
  for (const answer of answers) {
    const error = platformaticAnswer(plt, answer);
    attempts.push(error);
    if (error.findBy('canRetry', false)) break;
  }
  const tried = attempts.length;
  // base.js: closing the client while a retry waits appends this and fails with all of them.
  if (closed) attempts.push(new plt.UserError('Client closed while retrying produce.'));
  const last =
    attempts.length > 1
      ? new plt.MultipleErrors(`produce failed ${tried} times.`, attempts)
      : attempts[0];
  return { error: new plt.MultipleErrors('Producing messages failed.', [last]), tried };
}

async function main(): Promise<void> {
  const scenarios = JSON.parse(process.argv[2]) as Scenario[];
  const plt = require('@platformatic/kafka') as PlatformaticErrors;
  const reports: ClientErrorsReport[] = [];
  for (const scenario of scenarios) {
    const k = await kafkajsError(scenario.answers);
    const p = platformaticError(plt, scenario);
    const converted = asKafkajsError(p.error) as Error;
    reports.push({
      kafkajs: { ...classifyKafkaError(k.error), attempts: k.tried },
      platformatic: {
        ...classifyKafkaError(converted),
        attempts: p.tried,
        // The retry aggregate's (or the single attempt's), inside the per-leader aggregate.
        message: (converted as Error & { errors: Error[] }).errors[0].message,
      },
    });
  }
  process.stdout.write(JSON.stringify(reports));
}

void main();
