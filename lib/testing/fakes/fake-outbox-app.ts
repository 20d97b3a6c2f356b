import type { Provider } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import { OUTBOX_EVENT_WRITER } from '../../events/outbox-event.writer';
import { OutboxModule } from '../../outbox.module';
import type { OUTBOX_OPTIONS_TYPE } from '../../outbox.module-definition';
import { FakeConnection, FakeOutboxWriter } from './fake-connection';

export interface FakeOutboxApp {
  app: TestingModule;
  connection: FakeConnection;
  writer: FakeOutboxWriter;
}

/**
 * A Nest testing module with `OutboxModule.forRoot(options)` over a fake connection (registered
 * under `getConnectionToken(connectionName)`) and a fake outbox writer. Not initialized: call
 * `app.init()`.
 */
export async function compileFakeOutboxApp(
  options: typeof OUTBOX_OPTIONS_TYPE = {},
  providers: Provider[] = [],
  connection = new FakeConnection(),
): Promise<FakeOutboxApp> {
  const writer = new FakeOutboxWriter();
  const app = await Test.createTestingModule({
    imports: [OutboxModule.forRoot({ relay: false, ...options })],
    providers: [
      { provide: getConnectionToken(options.connectionName), useValue: connection },
      ...providers,
    ],
  })
    .overrideProvider(OUTBOX_EVENT_WRITER)
    .useValue(writer)
    .compile();
  return { app, connection, writer };
}
