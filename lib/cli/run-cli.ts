import { describeError } from '../common/errors/describe-error';
import { redactCredentials } from '../common/redact-credentials';
import { DeadLetterFilterError } from '../operations/dead-letter.filter';
import { parseCommandLine } from './cli-flags';
import type { CliIo } from './cli-io';
import { DEAD_LETTERS_USAGE, deadLettersCommand } from './dead-letters.args';
import { runDeadLettersCommand } from './dead-letters.command';
import { SCHEDULED_USAGE, scheduledCommand } from './scheduled.args';
import { runScheduledCommand } from './scheduled.command';

const USAGE = `${DEAD_LETTERS_USAGE}\n${SCHEDULED_USAGE}`;

/**
 * `npx nestjs-outbox <command>`: parses, runs, prints; resolves the exit code (0 done, 1 failed
 * or cancelled, 2 bad usage). Nothing it prints contains the connection string's credentials.
 */
export async function runCli(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: CliIo,
): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    io.out(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  let run: () => Promise<number>;
  try {
    const line = parseCommandLine(argv);
    if (line.command === 'scheduled') {
      const command = scheduledCommand(line, env);
      run = () => runScheduledCommand(command, io);
    } else {
      const command = deadLettersCommand(line, env);
      run = () => runDeadLettersCommand(command, io);
    }
  } catch (error) {
    io.err(`nestjs-outbox: ${redactCredentials((error as Error).message)}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await run();
  } catch (error) {
    if (error instanceof DeadLetterFilterError) {
      io.err(`nestjs-outbox: ${error.message}`);
      return 2;
    }
    io.err(`nestjs-outbox: ${redactCredentials(describeError(error))}`);
    return 1;
  }
}
