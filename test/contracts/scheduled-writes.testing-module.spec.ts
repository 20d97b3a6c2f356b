import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import { OutboxEmitter, TransactionRunner } from '../../lib';
import { OutboxTesting, OutboxTestingModule } from '../../lib/testing';
import { scheduledWritesContract } from './scheduled-writes.contract';

/** The schedule rules in `OutboxTestingModule`: `drain()` is what publishes there. */
describe('scheduled writes contract: OutboxTestingModule', () => {
  let moduleRef: TestingModule;
  afterAll(() => moduleRef?.close());

  scheduledWritesContract(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot({ scheduledEvents: true })],
    }).compile();
    await moduleRef.init();
    const outbox = moduleRef.get(OutboxTesting);
    const runner = moduleRef.get(TransactionRunner);
    const emitter = moduleRef.get(OutboxEmitter);
    return {
      emit: (event, schedule) => runner.run(async () => emitter.emit(event, schedule)),
      inTransaction: (fn) => runner.run(fn),
      cancel: (id) => emitter.cancel(id),
      publishDue: async () => {
        await outbox.drain();
      },
      stored: async (eventId) => outbox.emitted((event) => event.eventId === eventId)[0],
    };
  });
});
