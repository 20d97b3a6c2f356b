import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveConsumerOptions } from './consumer.options';
import { consumerNameProblem, defaultConsumerName } from './consumer-name';
import { mergeWithDefaults, resolveHandlerOptions } from './idempotent-handler.options';

describe('consumer options', () => {
  it('has defaults: 7 days retention, 5 failures, the ce_id header, no dead-letter topic', () => {
    expect(resolveConsumerOptions(undefined)).toEqual({
      processedRetentionSeconds: 7 * 24 * 3600,
      maxFailures: 5,
      eventIdHeader: 'ce_id',
      errorHistoryLimit: 10,
    });
  });

  it('keeps valid values', () => {
    const eventIdFallback = () => 'x';
    expect(
      resolveConsumerOptions({
        processedRetentionSeconds: 3600,
        maxFailures: 1,
        deadLetterTopic: 'orders.dlq',
        eventIdHeader: 'x-event-id',
        eventIdFallback,
        errorHistoryLimit: 3,
      }),
    ).toEqual({
      processedRetentionSeconds: 3600,
      maxFailures: 1,
      deadLetterTopic: 'orders.dlq',
      eventIdHeader: 'x-event-id',
      eventIdFallback,
      errorHistoryLimit: 3,
    });
  });

  it.each([
    [{ processedRetentionSeconds: 10 }, 'consumer.processedRetentionSeconds'],
    [{ processedRetentionSeconds: 1.5e3 + 0.5 }, 'consumer.processedRetentionSeconds'],
    [{ maxFailures: 0 }, 'consumer.maxFailures'],
    [{ maxFailures: '3' }, 'consumer.maxFailures'],
    [{ deadLetterTopic: 'has space' }, 'consumer.deadLetterTopic'],
    [{ deadLetterTopic: '' }, 'consumer.deadLetterTopic'],
    [{ eventIdHeader: ' ' }, 'consumer.eventIdHeader'],
    [{ eventIdFallback: 'ce_id' }, 'consumer.eventIdFallback'],
    [{ errorHistoryLimit: 0 }, 'consumer.errorHistoryLimit'],
    [{ maxFailure: 3 }, 'consumer.maxFailure'],
  ])('fails bootstrap on %j, naming %s', (raw, option) => {
    let error: unknown;
    try {
      resolveConsumerOptions(raw as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OutboxOptionsError);
    expect(error).toMatchObject({ option });
  });

  it('names consumers ClassName.method and refuses unusable names', () => {
    expect(defaultConsumerName('BillingController', 'onOrderPlaced')).toBe(
      'BillingController.onOrderPlaced',
    );
    expect(consumerNameProblem('billing')).toBeUndefined();
    expect(consumerNameProblem('')).toMatch(/empty/);
    expect(consumerNameProblem('a\nb')).toMatch(/control/);
    expect(consumerNameProblem('x'.repeat(201))).toMatch(/200/);
    expect(consumerNameProblem(7)).toMatch(/string/);
  });

  it('merges handler options over module defaults', () => {
    const defaults = resolveConsumerOptions({ deadLetterTopic: 'all.dlq', maxFailures: 4 });
    const plain = resolveHandlerOptions('C', 'm', undefined);
    expect(mergeWithDefaults(plain, defaults)).toEqual({
      consumer: 'C.m',
      maxFailures: 4,
      eventIdHeader: 'ce_id',
      eventIdFallback: undefined,
      validate: undefined,
      deadLetterTopic: 'all.dlq',
    });
    const own = resolveHandlerOptions('C', 'm', {
      consumer: 'mine',
      maxFailures: 2,
      deadLetterTopic: false,
    });
    expect(mergeWithDefaults(own, defaults)).toMatchObject({ consumer: 'mine', maxFailures: 2 });
    expect(mergeWithDefaults(own, defaults).deadLetterTopic).toBeUndefined();
  });
});
