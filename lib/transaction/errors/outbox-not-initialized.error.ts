import { OutboxError } from '../../common/errors/outbox.error';

/**
 * A `@Transactional` / `@EmitsEvent` method was called while no `OutboxModule` was running:
 * before the application finished `init()`, after it closed, or in an app that never imported
 * `OutboxModule.forRoot(...)`.
 */
export class OutboxNotInitializedError extends OutboxError {
  constructor(method: string, connectionName?: string) {
    super(
      `${method} needs a running OutboxModule` +
        (connectionName ? ` for connection '${connectionName}'` : '') +
        ', but none is initialized. Import OutboxModule.forRoot(...) (or forRootAsync) in the' +
        ' application module and call the method after `await app.init()` (or `createTestingModule(...).compile()` + `init()`), not before and not after `app.close()`.',
      'OUTBOX_NOT_INITIALIZED',
      { method, connectionName },
    );
  }
}
