import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The runner's bad-input behaviour: each failure stops it with one clear line naming the
 * problem and the fix, a non-zero exit, and the wrapped command never runs.
 */
const runner = join(__dirname, '..', 'run-with-servers.js');

function run(env: Record<string, string | undefined>) {
  const result = spawnSync(
    process.execPath,
    [runner, '--', process.execPath, '-e', 'console.log("RAN")'],
    {
      encoding: 'utf8',
      timeout: 120000,
      env: {
        ...process.env,
        KAFKA_BROKERS: '',
        OUTBOX_TEST_MONGODB: 'optional',
        MONGODB_URI: 'mongodb://127.0.0.1:1/x',
        ...env,
      },
    },
  );
  return { code: result.status, out: result.stdout + result.stderr };
}

describe('test server provisioning fails loudly on bad input', () => {
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => busy.close());

  it('an unreachable MONGODB_URI names the URI and stops before running anything', () => {
    const { code, out } = run({ KAFKA_BROKERS: '127.0.0.1:9' });
    expect(code).toBe(1);
    expect(out).toMatch(/MongoDB: cannot reach MONGODB_URI \(mongodb:\/\/127\.0\.0\.1:1\/x\)/);
    expect(out).not.toContain('RAN');
  });

  it('missing Maven (no cached jars) says to install it or set KAFKA_BROKERS', () => {
    const { code, out } = run({
      OUTBOX_CACHE_DIR: mkdtempSync(join(tmpdir(), 'outbox-empty-cache-')),
      PATH: '/nonexistent',
      MONGODB_URI: undefined,
    });
    expect(code).toBe(1);
    expect(out).toMatch(/Kafka: Maven \(mvn\) is not installed.*KAFKA_BROKERS/);
    expect(out).not.toContain('RAN');
  });

  it('a Kafka port that is already taken is named, with the fix', () => {
    const { code, out } = run({ OUTBOX_KAFKA_PORT: String(busyPort), MONGODB_URI: undefined });
    expect(code).toBe(1);
    expect(out).toMatch(
      new RegExp(`Kafka: port ${busyPort} on 127\\.0\\.0\\.1 is already taken.*KAFKA_BROKERS`),
    );
    expect(out).not.toContain('RAN');
  });

  it('a broker that is not ready in time stops the run instead of hanging', () => {
    const { code, out } = run({ OUTBOX_KAFKA_READY_TIMEOUT_MS: '1', MONGODB_URI: undefined });
    expect(code).toBe(1);
    expect(out).toMatch(/Kafka: the broker did not become ready within/);
    expect(out).not.toContain('RAN');
  });
});
