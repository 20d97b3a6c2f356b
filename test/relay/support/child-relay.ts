import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface ChildRelay {
  process: ChildProcess;
  leader: boolean;
  published: number;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

const ROOT = join(__dirname, '..', '..', '..');

/** Starts `relay-child.ts` in a new Node process (ts-node, transpile only). */
export function spawnRelay(db: string, topicPrefix: string, options: object = {}): ChildRelay {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'relay-child.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        RELAY_DB: db,
        RELAY_TOPIC_PREFIX: topicPrefix,
        RELAY_OPTIONS: JSON.stringify(options),
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const state: ChildRelay = {
    process: child,
    leader: false,
    published: 0,
    ready: Promise.resolve(),
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  state.ready = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`relay child exited (${code}) before ready`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line === 'ready') resolve();
        const match = /^leader=(\d) published=(\d+)/.exec(line);
        if (match) {
          state.leader = match[1] === '1';
          state.published = Number(match[2]);
        }
      }
    });
  });
  state.ready.catch(() => undefined);
  child.stderr?.on('data', (chunk: Buffer) => {
    if (process.env.RELAY_CHILD_LOGS) process.stderr.write(chunk);
  });
  return state;
}
