import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from 'kafkajs';
import { classifyKafkaError } from './kafka-error.classifier';
import { KAFKA_CLIENT_ERROR_GROUPS, KAFKA_PROTOCOL_ERROR_GROUPS } from './kafka-error.table';

const protocol = (type: string) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });
const named = (name: string, fields: object = {}) =>
  Object.assign(new Error(name), { name }, fields);
const aggregate = (...errors: Error[]) =>
  Object.assign(new Error('aggregate'), { name: 'KafkaJSAggregateError', errors });
const connection = () =>
  new KafkaJSConnectionError('Connection error: read ECONNRESET', {
    broker: 'localhost:9092',
  } as never);

describe('classifyKafkaError', () => {
  const protocolRows = KAFKA_PROTOCOL_ERROR_GROUPS.flatMap((group) =>
    group.errors.map((type) => [type, group.scope] as const),
  );
  it.each(protocolRows)(
    '%s concerns the %s, also as the last attempt of kafkajs retries',
    (type, scope) => {
      expect(classifyKafkaError(protocol(type))).toEqual({ scope, type });
      const raw = Object.assign(new Error(type), { type, code: 0, retriable: true });
      const retried = new KafkaJSNumberOfRetriesExceeded(new KafkaJSProtocolError(raw), {
        retryCount: 5,
        retryTime: 100,
      });
      expect(classifyKafkaError(retried)).toEqual({ scope, type });
    },
  );

  const clientRows = KAFKA_CLIENT_ERROR_GROUPS.flatMap((group) =>
    group.errors.map((name) => [name, group.scope] as const),
  );
  it.each(clientRows)('an error named %s concerns the %s', (name, scope) => {
    expect(classifyKafkaError(named(name)).scope).toBe(scope);
  });

  it('a partition the metadata lacks is that partition, though its type is an unknown topic', () => {
    const error = named('OutboxPartitionNotInMetadata', { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(classifyKafkaError(error)).toEqual({
      scope: 'partition',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });

  it('a send over its deadline (outcome unknown) pauses like a broker that does not answer', () => {
    expect(classifyKafkaError(named('OutboxKafkaSendTimeout')).scope).toBe('broker');
  });

  it('an error without a protocol type or a known name is a failure to reach the broker', () => {
    expect(classifyKafkaError(new Error('ECONNREFUSED'))).toEqual({ scope: 'broker' });
    expect(classifyKafkaError(undefined)).toEqual({ scope: 'broker' });
    expect(classifyKafkaError(protocol('A_CODE_NEITHER_CLIENT_KNOWS')).scope).toBe('event');
  });

  it('reads retries as their last attempt, whatever the earlier ones were answered', () => {
    const retried = (last: Error) =>
      new KafkaJSNumberOfRetriesExceeded(last, { retryCount: 2, retryTime: 10 });
    expect(classifyKafkaError(retried(connection()))).toEqual({ scope: 'broker' });
    // kafkajs' shape before 2.x and the tests' (originalError) reads alike.
    const old = named('KafkaJSNumberOfRetriesExceeded', {
      originalError: protocol('NOT_ENOUGH_REPLICAS'),
    });
    expect(classifyKafkaError(old)).toEqual({ scope: 'partition', type: 'NOT_ENOUGH_REPLICAS' });
    // The converted retry aggregate of @platformatic/kafka: earlier attempts are not read.
    const converted = named('KafkaJSNumberOfRetriesExceeded', {
      cause: connection(),
      attempts: [protocol('MESSAGE_TOO_LARGE'), connection()],
    });
    expect(classifyKafkaError(converted)).toEqual({ scope: 'broker' });
  });

  it('a non-retriable wrapper stands for what it wraps; bare, it is a call the client refused', () => {
    const wrapped = named('KafkaJSNonRetriableError', { cause: protocol('MESSAGE_TOO_LARGE') });
    expect(classifyKafkaError(wrapped)).toEqual({ scope: 'size', type: 'MESSAGE_TOO_LARGE' });
    expect(classifyKafkaError(named('KafkaJSNonRetriableError')).scope).toBe('configuration');
  });

  it("a send refused while kafkajs' producer disconnects is the client stopping, not a configuration error", () => {
    // kafkajs/src/producer/messageProducer.js validateConnectionStatus
    const disconnecting = new KafkaJSNonRetriableError(
      "The producer is disconnecting; therefore, it can't safely accept messages anymore",
    );
    expect(classifyKafkaError(disconnecting)).toEqual({ scope: 'broker' });
  });

  it.each([
    [['NOT_ENOUGH_REPLICAS', 'MESSAGE_TOO_LARGE'], 'size'],
    [['UNKNOWN_TOPIC_OR_PARTITION', 'NOT_ENOUGH_REPLICAS'], 'topic'],
    [['NOT_ENOUGH_REPLICAS', 'UNKNOWN_SERVER_ERROR'], 'partition'],
    [['UNSUPPORTED_VERSION', 'UNKNOWN_SERVER_ERROR'], 'configuration'],
    [['UNKNOWN_SERVER_ERROR', 'CORRUPT_MESSAGE'], 'event'],
  ])('the parts of one answer %j combine to %s', (types, scope) => {
    expect(classifyKafkaError(aggregate(...types.map(protocol))).scope).toBe(scope);
    expect(classifyKafkaError(aggregate(...types.reverse().map(protocol))).scope).toBe(scope);
  });

  it('a part that could not be delivered outranks one charged to the event', () => {
    expect(classifyKafkaError(aggregate(protocol('UNKNOWN_SERVER_ERROR'), connection()))).toEqual({
      scope: 'broker',
    });
    expect(classifyKafkaError(aggregate(connection(), protocol('NOT_ENOUGH_REPLICAS')))).toEqual({
      scope: 'partition',
      type: 'NOT_ENOUGH_REPLICAS',
    });
  });

  it('parts whose own errors were retried are each read as their last attempt', () => {
    const leader = (first: Error, last: Error) =>
      named('KafkaJSNumberOfRetriesExceeded', { cause: last, attempts: [first, last] });
    const error = aggregate(
      leader(protocol('MESSAGE_TOO_LARGE'), connection()),
      leader(connection(), protocol('REQUEST_TIMED_OUT')),
    );
    expect(classifyKafkaError(error)).toEqual({ scope: 'partition', type: 'REQUEST_TIMED_OUT' });
  });
});
