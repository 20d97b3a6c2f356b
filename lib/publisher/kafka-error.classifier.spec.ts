import { classifyKafkaError } from './kafka-error.classifier';

const protocol = (type: string) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });

describe('classifyKafkaError', () => {
  it.each([
    'MESSAGE_TOO_LARGE',
    'RECORD_LIST_TOO_LARGE',
    'INVALID_TOPIC_EXCEPTION',
    'UNKNOWN_TOPIC_OR_PARTITION',
  ])('%s is fatal, also when wrapped by kafkajs retries', (type) => {
    expect(classifyKafkaError(protocol(type))).toEqual({ fatal: true, type });
    const wrapped = Object.assign(new Error('retries exceeded'), { originalError: protocol(type) });
    expect(classifyKafkaError(wrapped).fatal).toBe(true);
    const aggregate = Object.assign(new Error('aggregate'), {
      errors: [new Error('x'), protocol(type)],
    });
    expect(classifyKafkaError(aggregate).fatal).toBe(true);
  });
  it('connection problems and leader changes are retriable', () => {
    expect(classifyKafkaError(new Error('ECONNREFUSED')).fatal).toBe(false);
    expect(classifyKafkaError(protocol('NOT_LEADER_OR_FOLLOWER'))).toEqual({
      fatal: false,
      type: 'NOT_LEADER_OR_FOLLOWER',
    });
  });
});
