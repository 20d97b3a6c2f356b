import { PublisherConfigurationError } from '../../publisher/errors/publisher-configuration.error';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { BrokerPause } from './broker.pause';

function setup() {
  const lines: string[] = [];
  const logger: RelayLogger = {
    log: (message) => lines.push(`log ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    error: (message) => lines.push(`error ${message}`),
    debug: () => undefined,
  };
  const metrics = new OutboxRelayMetrics();
  const pause = new BrokerPause(
    systemClock,
    { initialMs: 60_000, maxMs: 60_000, jitter: 0 },
    logger,
    metrics,
  );
  return { pause, lines, metrics };
}

const unsupported = () =>
  new PublisherConfigurationError(
    'UNSUPPORTED_VERSION',
    'Kafka did not accept the event for topic "Order": The version of API is not supported',
    { topic: 'Order', kafkaError: 'UNSUPPORTED_VERSION' },
  );

describe('a pause for a configuration error says what it is, not "broker unavailable"', () => {
  it('logs the configuration error once, gives it in the status while it lasts, and clears it when the broker accepts', () => {
    const { pause, lines, metrics } = setup();
    pause.failed(unsupported());
    pause.failed(unsupported());
    expect(lines).toEqual([
      'warn Publishing paused: configuration error: UNSUPPORTED_VERSION: Kafka did not accept the event ' +
        'for topic "Order": The version of API is not supported. Retried with backoff until it is fixed; ' +
        'no attempt is counted against the events.',
    ]);
    expect(lines.join()).not.toContain('unavailable');
    expect(pause.configurationError()).toMatch(/^configuration error: UNSUPPORTED_VERSION: /);
    expect(pause.remaining()).toBeGreaterThan(0);
    expect(metrics.outages).toBe(1);
    pause.accepted();
    expect(pause.configurationError()).toBeUndefined();
    expect(lines.at(-1)).toBe('log The broker accepts events again; publishing resumed.');
  });

  it('an outage keeps its own line, and a configuration error that follows one is said', () => {
    const { pause, lines } = setup();
    pause.failed(new Error('ECONNREFUSED'));
    expect(pause.configurationError()).toBeUndefined();
    pause.failed(unsupported());
    expect(lines).toEqual([
      expect.stringMatching(/^warn The broker is unavailable \(Error: ECONNREFUSED\)/),
      expect.stringMatching(/^warn Publishing paused: configuration error: UNSUPPORTED_VERSION/),
    ]);
    pause.failed(new Error('ECONNREFUSED'));
    expect(pause.configurationError()).toBeUndefined();
  });
});
