import type { mongo } from 'mongoose';

/**
 * The commands a MongoClient sends for the application's operations, in order, by name (`insert`,
 * `findAndModify`, `aggregate`, `commitTransaction`, `abortTransaction`, `endSessions`, ...),
 * between `start()` and `stop()`: the driver's command monitoring (`commandStarted`), which needs
 * the client created with `monitorCommands: true` (e.g. `MongooseModule.forRoot(uri,
 * { monitorCommands: true })`). Used by test/write-side and bench/write-side.bench.ts.
 *
 * What it does not see, without filtering anything: the driver's background monitoring. The
 * heartbeats (`hello`) and round-trip pings run on the monitors' own connections, whose command
 * events nobody forwards (they surface as `serverHeartbeat*` events instead), and the handshake
 * and authentication of a pooled connection run before the pool forwards that connection's
 * command events to the client (mongodb 7, `cmap/connection_pool.js` `createConnection`). So a
 * `hello` recorded here is one the application sent itself. What it does see: every command of
 * this client, from whatever code runs in the window; record while nothing else uses the client.
 */
export class CommandRecorder {
  private names: string[] | undefined;
  private readonly listener = (event: mongo.CommandStartedEvent): void => {
    this.names?.push(event.commandName);
  };

  constructor(private readonly client: mongo.MongoClient) {
    if (!client.options.monitorCommands) {
      throw new Error(
        'CommandRecorder: the client does not monitor its commands; create it with monitorCommands: true',
      );
    }
    client.on('commandStarted', this.listener);
  }

  start(): void {
    this.names = [];
  }

  /** The commands sent since `start()`, in the order they were sent. */
  stop(): string[] {
    const names = this.names ?? [];
    this.names = undefined;
    return names;
  }

  /** The commands `fn` sent (a call that should fail: `record(() => expect(call()).rejects...)`). */
  async record(fn: () => Promise<unknown>): Promise<string[]> {
    this.start();
    try {
      await fn();
      return this.stop();
    } finally {
      this.names = undefined;
    }
  }

  detach(): void {
    this.client.off('commandStarted', this.listener);
  }
}

/** `insert 2, commitTransaction 1`: how many of each, in order of first use, divided by `calls`. */
export function countCommands(names: readonly string[], calls = 1): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  const per = (n: number) =>
    Number.isInteger(n / calls) ? String(n / calls) : (n / calls).toFixed(2);
  return [...counts].map(([name, n]) => `${name} ${per(n)}`).join(', ') || 'none';
}
