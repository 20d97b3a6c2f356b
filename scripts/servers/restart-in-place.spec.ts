import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

// The runner's plain CommonJS helpers.
const common = require('./common') as {
  isAlive(pid: number): boolean;
  killProcess(pid: number, graceMs?: number): Promise<void>;
  restartablePort(): Promise<number>;
};

/**
 * What the outage tests need to stop the broker and start it again on the same ports: a port no
 * outgoing connection can take meanwhile, and a stop that ends even when nobody reaps the process.
 */
describe('a server restarted in place', () => {
  const range = (() => {
    try {
      const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
        .trim()
        .split(/\s+/)
        .map(Number);
      return { low };
    } catch {
      return undefined;
    }
  })();

  (range ? it : it.skip)('gets ports below the ephemeral range (Linux)', async () => {
    for (let i = 0; i < 20; i++) {
      const port = await common.restartablePort();
      expect(port).toBeGreaterThanOrEqual(10000);
      expect(port).toBeLessThan(range!.low);
    }
  });

  (range ? it : it.skip)(
    'counts a process that exited but was not reaped (a zombie) as stopped, so a stop ends (Linux)',
    async () => {
      // `sh` starts `sleep 0` in the background, then becomes `sleep 5`, which never reaps it.
      const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 5'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        const zombie = await new Promise<number>((resolve) =>
          parent.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
        );
        const deadline = Date.now() + 5000;
        while (!readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z')) {
          if (Date.now() > deadline) throw new Error(`process ${zombie} never became a zombie`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(() => process.kill(zombie, 0)).not.toThrow(); // signal 0 still finds it
        expect(common.isAlive(zombie)).toBe(false);
        await common.killProcess(zombie, 100); // returned at once: it was waiting forever before
        expect(common.isAlive(parent.pid!)).toBe(true);
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );
});
