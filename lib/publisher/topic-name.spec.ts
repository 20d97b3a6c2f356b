import { createTopicRouter, topicNameProblem } from './topic-name';
import { InvalidTopicError } from './errors/invalid-topic.error';

const event = {
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: 'o-1',
  payload: {},
};

describe('topic names and routing', () => {
  it.each(['Order', 'events.Order_v2-x', 'a'.repeat(249)])('accepts %s', (name) => {
    expect(topicNameProblem(name)).toBeUndefined();
  });
  it.each(['', '.', '..', 'a'.repeat(250), 'has space', 'ümlaut', 'a/b'])('rejects %j', (name) => {
    expect(topicNameProblem(name)).toBeDefined();
  });
  it('defaults to prefix + aggregateType', () => {
    expect(createTopicRouter({ prefix: 'events.' })(event)).toBe('events.Order');
    expect(createTopicRouter({})(event)).toBe('Order');
  });
  it('uses the user function and validates what it returns', () => {
    expect(createTopicRouter({ route: (e) => `t.${e.eventType}` })(event)).toBe('t.OrderCreated');
    expect(() => createTopicRouter({ route: () => 'bad topic' })(event)).toThrow(InvalidTopicError);
    expect(() =>
      createTopicRouter({
        route: () => {
          throw new Error('boom');
        },
      })(event),
    ).toThrow(/boom/);
  });
  it('validates every name, also after a valid one', () => {
    const names = ['Order', 'Order', 'bad topic', 'Order'];
    const route = createTopicRouter({ route: () => names.shift() as string });
    expect(route(event)).toBe('Order');
    expect(route(event)).toBe('Order');
    expect(() => route(event)).toThrow(InvalidTopicError);
    expect(route(event)).toBe('Order');
  });
});
