import { Logger } from '@nestjs/common';

/** What a part of the relay says. Each part logs under its own name (`RelayLease`, `RelayStream`...). */
export interface RelayLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

/** Makes the logger of one part of the relay, named after it. */
export type RelayLoggerFactory = (context: string) => RelayLogger;

/** Logs through Nest's `Logger`, so an app's logger configuration applies. */
export const nestRelayLoggers: RelayLoggerFactory = (context) => new Logger(context);
