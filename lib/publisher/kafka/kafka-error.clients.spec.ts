import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type {
  Answer,
  ClientErrorsReport,
  Scenario,
} from '../../../test/publisher/support/client-errors.child';

/** Error codes of the Kafka protocol used below. */
const CORRUPT_MESSAGE = 2;
const LEADER_NOT_AVAILABLE = 5;
const REQUEST_TIMED_OUT = 7;
const MESSAGE_TOO_LARGE = 10;
const NOT_ENOUGH_REPLICAS = 19;
const INVALID_TIMESTAMP = 32;
const UNSUPPORTED_VERSION = 35;
const INVALID_RECORD = 87;
const UNKNOWN_SERVER_ERROR = -1;

/**
 * Each client's error for the answers, built in a child process with the clients' own classes
 * (see client-errors.child.ts), and how the classifier reads it.
 */
function classifyBoth(scenarios: Scenario[]): ClientErrorsReport[] {
  const child = join(__dirname, '../../../test/publisher/support/client-errors.child.ts');
  const out = execFileSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', child, JSON.stringify(scenarios)],
    { cwd: join(__dirname, '../../..'), encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(out) as ClientErrorsReport[];
}

describe('the final broker answer decides, whichever client retried the send', () => {
  // Attempts oldest first; each is the broker's answer (failing partitions' codes) or a connection failure.
  const cases: Array<[string, Answer[], string, string | undefined]> = [
    // Defect (issue 30, 6): platformatic's error held every attempt and the strongest won: `size`
    // (dead-lettered at once) with platformatic, `broker` with kafkajs.
    [
      'corrupt, then the connection fails twice',
      [[CORRUPT_MESSAGE], 'network', 'network'],
      'broker',
      undefined,
    ],
    [
      'not enough replicas, then the connection fails',
      [[NOT_ENOUGH_REPLICAS], 'network'],
      'broker',
      undefined,
    ],
    [
      'corrupt, then not enough replicas',
      [[CORRUPT_MESSAGE], [NOT_ENOUGH_REPLICAS]],
      'partition',
      'NOT_ENOUGH_REPLICAS',
    ],
    [
      'leader moving, then the record too large',
      [[LEADER_NOT_AVAILABLE], [MESSAGE_TOO_LARGE]],
      'size',
      'MESSAGE_TOO_LARGE',
    ],
    [
      'the connection fails, then not enough replicas',
      ['network', [NOT_ENOUGH_REPLICAS]],
      'partition',
      'NOT_ENOUGH_REPLICAS',
    ],
    [
      'timed out, then corrupt (Kafka: retriable)',
      [[REQUEST_TIMED_OUT], [CORRUPT_MESSAGE]],
      'event',
      'CORRUPT_MESSAGE',
    ],
    // Defect (issue 30, 7): the host's clock, not the event: was `event` (dead-lettered after maxAttempts).
    [
      'the connection fails, then the timestamp is refused',
      ['network', [INVALID_TIMESTAMP]],
      'topic',
      'INVALID_TIMESTAMP',
    ],
    // Defect (issue 30, 7): was `event`; the client and the broker disagree: nothing can be published.
    ['unsupported version', [[UNSUPPORTED_VERSION]], 'configuration', 'UNSUPPORTED_VERSION'],
    // One answer, two parts (platformatic keeps both, kafkajs the first): the record errors of
    // produce v8+ come as UNKNOWN_SERVER_ERROR parts beside the partition's INVALID_RECORD.
    [
      'an invalid record with its record error',
      [[INVALID_RECORD, UNKNOWN_SERVER_ERROR]],
      'size',
      'INVALID_RECORD',
    ],
    // Defect (issue 30, 7): was `broker` with both (an endless "broker unavailable"); the broker
    // lacks the API version the client needs: a configuration error.
    [
      'the connection fails, then the API is unsupported',
      ['network', 'unsupported-api'],
      'configuration',
      undefined,
    ],
  ];
  let reports: ClientErrorsReport[];
  let closed: ClientErrorsReport;
  beforeAll(() => {
    reports = classifyBoth([
      ...cases.map(([, answers]) => ({ answers })),
      { answers: [[NOT_ENOUGH_REPLICAS], 'network'], closed: true },
    ]);
    closed = reports[cases.length];
  }, 60_000);

  it.each(cases.map((c, i) => [...c, i] as const))(
    '%s: %j is %s (%s) with both clients',
    (_name, answers, scope, type, i) => {
      const { kafkajs, platformatic } = reports[i];
      expect(kafkajs.attempts).toBe(answers.length);
      expect(platformatic.attempts).toBe(answers.length);
      expect({ scope: kafkajs.scope, type: kafkajs.type }).toEqual({ scope, type });
      expect({ scope: platformatic.scope, type: platformatic.type }).toEqual({ scope, type });
    },
  );

  it('a client closed while a retry waits is read by its last attempt, not as a refused call', () => {
    expect(closed.platformatic).toMatchObject({ scope: 'broker', attempts: 2 });
    expect(closed.platformatic.message).toBe('produce failed 2 times. Last: Connection closed');
  });

  it("platformatic's retry aggregate says how many attempts failed and the last answer", () => {
    expect(reports[0].platformatic.message).toBe('produce failed 3 times. Last: Connection closed');
  });
});
