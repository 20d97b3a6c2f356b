import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveConsumerOptions } from './consumer.options';
import {
  consumerNameProblem,
  mergeWithDefaults,
  resolveHandlerOptions,
} from './idempotent-handler.options';

describe('consumer options', () => {
  it('has defaults: 7 days retention, 5 failures, 20 s timeout, the ce_id header, no dead-letter topic, batches of 100 events / 4 MiB', () => {
    expect(resolveConsumerOptions(undefined)).toEqual({
      processedRetentionSeconds: 7 * 24 * 3600,
      maxFailures: 5,
      retryBackoff: { initialMs: 200, maxMs: 5000 },
      handlerTimeoutMs: 20_000,
      deadLetterMaxValueBytes: 512 * 1024,
      eventIdHeader: 'ce_id',
      errorHistoryLimit: 10,
      batch: { maxEvents: 100, maxBytes: 4 * 1024 * 1024 },
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
        retryBackoff: { initialMs: 10 },
        handlerTimeoutMs: 1000,
        deadLetterMaxValueBytes: 4096,
        batch: { maxEvents: 1 },
      }),
    ).toEqual({
      processedRetentionSeconds: 3600,
      maxFailures: 1,
      retryBackoff: { initialMs: 10, maxMs: 5000 },
      handlerTimeoutMs: 1000,
      deadLetterMaxValueBytes: 4096,
      deadLetterTopic: 'orders.dlq',
      eventIdHeader: 'x-event-id',
      eventIdFallback,
      errorHistoryLimit: 3,
      batch: { maxEvents: 1, maxBytes: 4 * 1024 * 1024 },
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
    [{ errorHistoryLimit: 1000 }, 'consumer.errorHistoryLimit'],
    [{ handlerTimeoutMs: 50 }, 'consumer.handlerTimeoutMs'],
    [{ handlerTimeoutMs: 3_600_000 }, 'consumer.handlerTimeoutMs'],
    [{ deadLetterMaxValueBytes: 16 * 1024 * 1024 }, 'consumer.deadLetterMaxValueBytes'],
    [{ retryBackoff: 5 }, 'consumer.retryBackoff'],
    [{ retryBackoff: { initial: 5 } }, 'consumer.retryBackoff.initial'],
    [{ retryBackoff: { initialMs: 500, maxMs: 100 } }, 'consumer.retryBackoff.maxMs'],
    [{ maxFailure: 3 }, 'consumer.maxFailure'],
    [{ batch: 10 }, 'consumer.batch'],
    [{ batch: { maxEvents: 0 } }, 'consumer.batch.maxEvents'],
    [{ batch: { maxEvents: 1001 } }, 'consumer.batch.maxEvents'],
    [{ batch: { maxEvents: 2.5 } }, 'consumer.batch.maxEvents'],
    [{ batch: { maxBytes: 16 * 1024 * 1024 } }, 'consumer.batch.maxBytes'],
    [{ batch: { maxEvent: 10 } }, 'consumer.batch.maxEvent'],
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
    expect(resolveHandlerOptions('BillingController', 'onOrderPlaced', undefined).consumer).toBe(
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
      handler: 'C.m',
      consumer: 'C.m',
      maxFailures: 4,
      retryBackoff: { initialMs: 200, maxMs: 5000 },
      handlerTimeoutMs: 20_000,
      eventIdHeader: 'ce_id',
      eventIdFallback: undefined,
      deadLetterTopic: 'all.dlq',
    });
    expect(plain.consumerNamed).toBe(false);
    const own = resolveHandlerOptions('C', 'm', {
      consumer: 'mine',
      maxFailures: 2,
      handlerTimeoutMs: 500,
      deadLetterTopic: false,
    });
    expect(own.consumerNamed).toBe(true);
    expect(mergeWithDefaults(own, defaults)).toMatchObject({
      consumer: 'mine',
      maxFailures: 2,
      handlerTimeoutMs: 500,
    });
    expect(mergeWithDefaults(own, defaults).deadLetterTopic).toBeUndefined();
  });
});
