/** A MongoDB-shaped error (what the driver would throw): code, codeName, labels. */
export class SimMongoError extends Error {
  override readonly name = 'MongoServerError';

  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly errorLabels: string[] = [],
  ) {
    super(message);
  }
}

export const mongoErrors = {
  notPrimary: () =>
    new SimMongoError(10107, 'NotWritablePrimary', 'not primary (election in progress)', [
      'RetryableWriteError',
    ]),
  network: () =>
    new SimMongoError(6, 'HostUnreachable', 'connection to the primary was reset', [
      'RetryableWriteError',
    ]),
  timeout: () => new SimMongoError(50, 'MaxTimeMSExpired', 'operation exceeded time limit', []),
  interrupted: () =>
    new SimMongoError(11602, 'InterruptedDueToReplStateChange', 'operation was interrupted'),
  cursorKilled: () => new SimMongoError(43, 'CursorNotFound', 'cursor not found (killed)'),
  historyLost: () =>
    new SimMongoError(
      286,
      'ChangeStreamHistoryLost',
      'Resume of change stream was not possible, as the resume point may no longer be in the oplog',
    ),
};
