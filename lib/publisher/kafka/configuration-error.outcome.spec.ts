import { Logger } from '@nestjs/common';
import type { LoggerService } from '@nestjs/common';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { PublisherConfigurationError } from '../errors/publisher-configuration.error';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender } from './kafka.sender';
import { pendingEvent } from '../../../test/publisher/support/pending-event';

/** kafkajs' error for a protocol error code in an answer (src/protocol/error.js). */
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): Error;
};
const UNSUPPORTED_VERSION = 35;

class RefusingSender implements KafkaSender {
  sends = 0;
  constructor(private readonly error: () => Error) {}
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(): Promise<number> {
    return 4;
  }
  async send(): Promise<void> {
    this.sends++;
    throw this.error();
  }
}

const warnings: string[] = [];
const logger: LoggerService = {
  log: () => undefined,
  error: () => undefined,
  warn: (message: unknown) => warnings.push(String(message)),
  debug: () => undefined,
  verbose: () => undefined,
};

const event = (aggregateId: string): OutboxEventRecord => pendingEvent(aggregateId);

describe('a configuration error of the broker or the client is reported as one', () => {
  beforeEach(() => {
    warnings.length = 0;
    Logger.overrideLogger(logger);
  });
  afterEach(() => Logger.overrideLogger(['error']));

  it('pauses all publishing (no attempt counted) with a PublisherConfigurationError, after one send', async () => {
    // Defect (issue 30, 7): UNSUPPORTED_VERSION was `event`: counted, dead-lettered after maxAttempts.
    const sender = new RefusingSender(() => createErrorFromCode(UNSUPPORTED_VERSION));
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const outcomes = await publisher.publish(['a', 'b', 'c', 'd', 'e'].map(event));
    expect(sender.sends).toBe(1);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ status: 'retriable', scope: 'broker' });
      const error = (outcome as { error: Error }).error;
      expect(error).toBeInstanceOf(PublisherConfigurationError);
      expect(error).toMatchObject({
        reason: 'configuration error: UNSUPPORTED_VERSION',
        code: 'OUTBOX_PUBLISHER_CONFIGURATION',
        context: { topic: 'Order', kafkaError: 'UNSUPPORTED_VERSION' },
      });
    }
  });

  it('a client error is named by its name (SASL authentication refused)', async () => {
    const sasl = Object.assign(new Error('SASL PLAIN authentication failed'), {
      name: 'KafkaJSSASLAuthenticationError',
    });
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, new RefusingSender(() => sasl));
    const [outcome] = await publisher.publish([event('a')]);
    expect((outcome as { error: Error }).error).toHaveProperty(
      'reason',
      'configuration error: KafkaJSSASLAuthenticationError',
    );
  });

  it('while it lasts, says once a minute that Kafka refuses the relay, not that it is unavailable', async () => {
    let now = 1_000_000;
    const sender = new RefusingSender(() => createErrorFromCode(UNSUPPORTED_VERSION));
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender, () => now);
    for (let second = 0; second <= 60; second += 2) {
      now = 1_000_000 + second * 1000;
      await publisher.publish([event('a')]);
    }
    expect(warnings).toEqual([
      expect.stringMatching(
        /^Kafka still refuses the relay after 1 min 0 s: 31 sends failed so far \(last: configuration error: UNSUPPORTED_VERSION: /,
      ),
    ]);
    expect(warnings.join()).not.toContain('unavailable');
  });
});
