/** The console's resolved options (`ResolvedConsoleOptions`). */
export const OUTBOX_CONSOLE_OPTIONS = Symbol('outbox:console_options');
/** The index the event page's aggregate lookup reads (created by the console at bootstrap). */
export const CONSOLE_AGGREGATE_INDEX = {
  key: { aggregateType: 1, aggregateId: 1, sequence: 1, _id: 1 },
  name: 'outbox_console_by_aggregate',
} as const;
