import {
  Catch,
  Controller,
  Injectable,
  Logger,
  UseFilters,
  type ExceptionFilter,
  type ModuleMetadata,
} from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, MessagePattern, Payload } from '@nestjs/microservices';
import { MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import {
  IdempotentHandler,
  IdempotentHandlerBootstrapError,
  OutboxModule,
  type OutboxModuleOptions,
} from '../../lib';
import { describeWith, uniqueName } from '../harness';
import { consumerMongoUri, dropDatabase, testLogLevels } from './consumer-app.fixtures';

@Controller()
class GoodHandlers {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'checks.good' })
  onPlaced(@Payload() _p: unknown, @Ctx() _ctx: KafkaContext) {}
}

@Injectable()
class NotAController {
  @IdempotentHandler({ consumer: 'checks.provider' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class NoEventPattern {
  @IdempotentHandler({ consumer: 'checks.no-pattern' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class OnAMessagePattern {
  @MessagePattern('orders.get')
  @IdempotentHandler({ consumer: 'checks.message-pattern' })
  onGet(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class UnknownConnection {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'checks.unknown-connection', connectionName: 'billing' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class SameNameA {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'checks.same' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class SameNameB {
  @EventPattern('OrderCancelled')
  @IdempotentHandler({ consumer: 'checks.same' })
  onCancelled(_p: unknown, _ctx: KafkaContext) {}
}

@Catch()
class SomeFilter implements ExceptionFilter {
  catch() {
    return undefined;
  }
}

@Controller()
class FilterAbove {
  @UseFilters(new SomeFilter())
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'checks.filter-above' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class FilterBelow {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'checks.filter-below' })
  @UseFilters(new SomeFilter())
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

/**
 * Issue 11, defect 6 and the startup explorer: each misconfiguration fails bootstrap with an
 * `IdempotentHandlerBootstrapError` naming the handler.
 */
describeWith(['mongodb'], '@IdempotentHandler misconfigurations fail bootstrap', () => {
  const db = uniqueName('checks');
  beforeAll(() => Logger.overrideLogger(testLogLevels()));
  afterAll(() => dropDatabase(db));

  async function boot(
    metadata: ModuleMetadata,
    outbox: OutboxModuleOptions | false = {},
  ): Promise<() => Promise<void>> {
    const moduleRef = await Test.createTestingModule({
      ...metadata,
      imports: [
        MongooseModule.forRoot(consumerMongoUri(db)),
        ...(outbox === false ? [] : [OutboxModule.forRoot({ relay: false, ...outbox })]),
        ...(metadata.imports ?? []),
      ],
    }).compile();
    moduleRef.useLogger(testLogLevels());
    try {
      await moduleRef.init();
    } catch (error) {
      await moduleRef.close().catch(() => undefined);
      throw error;
    }
    return () => moduleRef.close();
  }

  async function bootError(
    metadata: ModuleMetadata,
    outbox: OutboxModuleOptions | false = {},
  ): Promise<IdempotentHandlerBootstrapError> {
    const error = await boot(metadata, outbox).then(
      async (close) => {
        await close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IdempotentHandlerBootstrapError);
    return error as IdempotentHandlerBootstrapError;
  }

  it('a well-formed handler boots', async () => {
    await (
      await boot({ controllers: [GoodHandlers] })
    )();
  });

  it('on a provider, not a controller', async () => {
    const error = await bootError({ controllers: [GoodHandlers], providers: [NotAController] });
    expect(error).toMatchObject({
      handler: 'NotAController.onPlaced',
      problem: 'not-a-controller',
    });
    expect(error.message).toMatch(/NotAController\.onPlaced/);
  });

  it.each([
    ['no pattern', NoEventPattern, 'NoEventPattern.onPlaced'],
    ['a @MessagePattern', OnAMessagePattern, 'OnAMessagePattern.onGet'],
  ])('on a controller method with %s', async (_what, controller, handler) => {
    const error = await bootError({ controllers: [controller] });
    expect(error).toMatchObject({ handler, problem: 'not-an-event-handler' });
    expect(error.message).toMatch(/@EventPattern/);
  });

  it('a connectionName no OutboxModule serves', async () => {
    const error = await bootError({ controllers: [UnknownConnection] });
    expect(error).toMatchObject({
      handler: 'UnknownConnection.onPlaced',
      problem: 'unknown-connection',
    });
    expect(error.message).toMatch(/'billing'/);
  });

  it('two handlers with one consumer name', async () => {
    const error = await bootError({ controllers: [SameNameA, SameNameB] });
    expect(error.problem).toBe('duplicate-consumer');
    expect(error.message).toMatch(/SameNameA\.onPlaced/);
    expect(error.message).toMatch(/SameNameB\.onCancelled/);
    expect(error.message).toMatch(/"checks\.same"/);
  });

  it('@UseFilters above @IdempotentHandler (its filter would see errors first)', async () => {
    await (
      await boot({ controllers: [FilterBelow] })
    )();
    const error = await bootError({ controllers: [FilterAbove] });
    expect(error).toMatchObject({ handler: 'FilterAbove.onPlaced', problem: 'filter-order' });
  });

  it('no OutboxModule in the application at all', async () => {
    const error = await bootError({ controllers: [GoodHandlers] }, false);
    expect(error).toMatchObject({ handler: 'GoodHandlers.onPlaced', problem: 'no-outbox-module' });
    expect(error.message).toMatch(/OutboxModule\.forRoot/);
  });

  it('createIndexes: false without the unique (consumer, eventId) index', async () => {
    const bare = uniqueName('checks-bare');
    const error = await bootError(
      { controllers: [GoodHandlers] },
      { createIndexes: false, collections: { processedEvents: bare } },
    );
    expect(error).toMatchObject({ problem: 'missing-unique-index' });
    expect(error.message).toContain(bare);
    // Once the index exists (here: created by a bootstrap with createIndexes on), it boots.
    await (
      await boot({ controllers: [GoodHandlers] }, { collections: { processedEvents: bare } })
    )();
    await (
      await boot(
        { controllers: [GoodHandlers] },
        { createIndexes: false, collections: { processedEvents: bare } },
      )
    )();
  });
});
