import { classifyKafkaError } from './kafka-error.classifier';

const protocol = (type: string) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });
const named = (name: string) => Object.assign(new Error(name), { name });

describe('classifyKafkaError', () => {
  it.each([
    ['MESSAGE_TOO_LARGE', 'size'],
    ['RECORD_LIST_TOO_LARGE', 'size'],
    ['INVALID_RECORD', 'size'],
    ['INVALID_TOPIC_EXCEPTION', 'invalid-topic'],
    ['UNKNOWN_TOPIC_OR_PARTITION', 'topic'],
    ['TOPIC_AUTHORIZATION_FAILED', 'topic'],
    ['NOT_ENOUGH_REPLICAS', 'partition'],
    ['LEADER_NOT_AVAILABLE', 'partition'],
    ['NOT_LEADER_OR_FOLLOWER', 'partition'],
    ['REQUEST_TIMED_OUT', 'partition'],
    ['CLUSTER_AUTHORIZATION_FAILED', 'broker'],
    ['DUPLICATE_SEQUENCE_NUMBER', 'event'],
  ])('%s concerns the %s, also when wrapped by kafkajs retries', (type, scope) => {
    expect(classifyKafkaError(protocol(type))).toEqual({ scope, type });
    const wrapped = Object.assign(named('KafkaJSNumberOfRetriesExceeded'), {
      originalError: protocol(type),
    });
    expect(classifyKafkaError(wrapped).scope).toBe(scope);
    const aggregate = Object.assign(new Error('aggregate'), {
      errors: [new Error('x'), protocol(type)],
    });
    expect(classifyKafkaError(aggregate).scope).toBe(scope);
  });

  it('connection problems and errors without a protocol type concern the broker', () => {
    expect(classifyKafkaError(new Error('ECONNREFUSED')).scope).toBe('broker');
    expect(classifyKafkaError(named('KafkaJSConnectionClosedError')).scope).toBe('broker');
    const retries = Object.assign(named('KafkaJSNumberOfRetriesExceeded'), {
      originalError: named('KafkaJSConnectionError'),
    });
    expect(classifyKafkaError(retries).scope).toBe('broker');
  });
});
