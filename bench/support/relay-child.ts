/* A relay of a bench in a process of its own (bench/*.child.ts), so that the memory and CPU time
 * measured are the relay's, not the bench's: forked with the environment its app reads
 * (bench/support/relay-child.app.ts), its stderr kept to say why it stopped. */
import { execFileSync, fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export type RelayChildName = 'relay-drain' | 'scheduled-relay' | 'tenants-relay';

let compiledDir: string | undefined;

/**
 * The children run compiled JavaScript: under ts-node the TypeScript compiler alone would add
 * about 100 MB to the RSS being measured. Compiled once per run (bench/tsconfig.child.json), into
 * this checkout's dist/ (not node_modules, which checkouts may share).
 */
function compiledChild(name: RelayChildName): string {
  if (!compiledDir) {
    const bench = join(__dirname, '..');
    execFileSync(
      process.execPath,
      [require.resolve('typescript/bin/tsc'), '-p', join(bench, 'tsconfig.child.json')],
      { stdio: 'inherit' },
    );
    compiledDir = join(bench, '..', 'dist/bench-children/bench');
  }
  return join(compiledDir, `${name}.child.js`);
}

export interface RelayChildOptions {
  /** The bench database's connection string. */
  mongoUri: string;
  prefix: string;
  batch: number;
  /** Merged into the relay options; when absent, the caller's RELAY_BENCH_OPTIONS is used. */
  relayOptions?: object;
  /** The child's own variables (see its header). */
  env?: Record<string, string>;
  execArgv?: string[];
  /** The child's NODE_OPTIONS (default none: not the bench's ts-node). */
  nodeOptions?: string;
  /** Also print the child's stderr (its traces and log lines) on the bench's. */
  echoStderr?: boolean;
}

export class RelayChild {
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  private readonly waiting: Array<(message: unknown) => void> = [];
  private output = '';

  constructor(
    private readonly name: RelayChildName,
    options: RelayChildOptions,
  ) {
    this.process = fork(compiledChild(name), [], {
      execArgv: options.execArgv ?? [],
      env: {
        ...process.env,
        NODE_OPTIONS: options.nodeOptions ?? '',
        MONGODB_URI: options.mongoUri,
        BENCH_PREFIX: options.prefix,
        BENCH_BATCH: String(options.batch),
        ...(options.relayOptions && { RELAY_BENCH_OPTIONS: JSON.stringify(options.relayOptions) }),
        ...options.env,
      },
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    this.process.stderr?.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
      if (options.echoStderr) process.stderr.write(chunk);
    });
    this.process.on('message', (message) => this.waiting.shift()?.(message));
    this.exited = new Promise((resolve) => this.process.once('exit', resolve));
  }

  /** The child's next message; rejects, saying why, if it exits first. */
  next<T>(): Promise<T> {
    return Promise.race([
      new Promise<T>((resolve) => this.waiting.push(resolve as (message: unknown) => void)),
      this.exited.then((code) => {
        throw new Error(`the ${this.name} process exited with ${code}: ${this.why()}`);
      }),
    ]);
  }

  /** The error line of its output (e.g. an OutboxOptionsError), without colours; else its start. */
  private why(): string {
    // eslint-disable-next-line no-control-regex
    const text = this.output.replace(/\x1b\[[0-9;]*m/g, '');
    return (text.match(/^.*(Error|error).*$/m)?.[0] ?? text).trim().slice(0, 500);
  }
}
