import { Controller, Injectable, UseGuards, UsePipes } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import {
  EmitsEvent,
  IdempotentHandler,
  IdempotentHandlerBootstrapError,
  OutboxConsumerMetrics,
  OutboxEmitter,
  OutboxRelay,
  Transactional,
  TransactionRunner,
} from '../index';
import {
  OutboxDrainError,
  OutboxExpectationError,
  OutboxTesting,
  OutboxTestingModule,
  type OutboxTestingOptions,
} from './index';

interface Order {
  id: string;
  total: number;
}

/** What a user's service depends on; the test gives a double. */
abstract class OrderRepository {
  abstract save(order: { id: string; total: number }): Promise<void>;
}

/** A user's service, as in production. */
@Injectable()
class OrdersService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly outbox: OutboxEmitter,
  ) {}

  @EmitsEvent<Order>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => order.id,
    payload: (order) => ({ total: order.total }),
  })
  async place(id: string, total: number): Promise<Order> {
    const order = { id, total };
    await this.orders.save(order);
    if (total > 100) {
      this.outbox.emit({
        eventType: 'LargeOrderPlaced',
        aggregateType: 'Order',
        aggregateId: id,
        payload: { total },
      });
    }
    return order;
  }

  @Transactional()
  async placeTwo(first: string, second: string) {
    await this.place(first, 1);
    await this.place(second, 2);
  }
}

/** A user's consumer: a read model fed by the order events, which emits events of its own. */
@Controller()
class OrderSummaries {
  readonly applied: Array<{ orderId: string; total: number; eventId: string }> = [];
  readonly audited: string[] = [];
  failures = 0;
  outage = false;

  constructor(private readonly outbox: OutboxEmitter) {}

  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'order-summaries', maxFailures: 2 })
  async onPlaced(@Payload() event: { total: number }, @Ctx() context: KafkaContext) {
    if (this.outage) {
      throw Object.assign(new Error('connection refused'), { name: 'MongoNetworkError' });
    }
    if (this.failures > 0) {
      this.failures--;
      throw new Error('summary store unavailable');
    }
    const message = context.getMessage();
    const orderId = String(message.key);
    this.applied.push({ orderId, total: event.total, eventId: String(message.headers!.ce_id) });
    this.outbox.emit({
      eventType: 'SummaryUpdated',
      aggregateType: 'Summary',
      aggregateId: orderId,
      payload: { total: event.total },
    });
  }

  /** Plain Kafka transport style: the pattern is the topic (`${topicPrefix}${aggregateType}`). */
  @EventPattern('shop.Summary')
  @IdempotentHandler({ consumer: 'audit' })
  async onSummary(@Payload() event: { total: number }, @Ctx() context: KafkaContext) {
    this.audited.push(`${String(context.getMessage().key)}:${event.total}`);
  }
}

describe('OutboxTestingModule in a user-style unit test', () => {
  let moduleRef: TestingModule;
  let outbox: OutboxTesting;
  let orders: OrdersService;
  let summaries: OrderSummaries;
  const saved: string[] = [];

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot({ topicPrefix: 'shop.' })],
      controllers: [OrderSummaries],
      providers: [
        OrdersService,
        {
          provide: OrderRepository,
          useValue: {
            save: async (order: { id: string; total: number }) => {
              if (order.id === 'broken') throw new Error('database says no');
              saved.push(order.id);
            },
          },
        },
      ],
    }).compile();
    await moduleRef.init();
    outbox = moduleRef.get(OutboxTesting);
    orders = moduleRef.get(OrdersService);
    summaries = moduleRef.get(OrderSummaries);
  });
  afterAll(() => moduleRef.close());
  beforeEach(() => {
    outbox.clear();
    summaries.applied.length = 0;
    summaries.audited.length = 0;
    summaries.failures = 0;
    summaries.outage = false;
  });

  it('records what each committed call emitted, in commit order', async () => {
    await orders.place('o-1', 50);
    await orders.place('o-2', 150);
    expect(outbox.emitted().map((e) => [e.transaction, e.eventType, e.aggregateId])).toEqual([
      [1, 'OrderPlaced', 'o-1'],
      [2, 'LargeOrderPlaced', 'o-2'],
      [2, 'OrderPlaced', 'o-2'],
    ]);
    const event = outbox.expectEmitted('OrderPlaced', {
      aggregateId: 'o-2',
      payload: { total: 150 },
    });
    expect(event.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(outbox.emitted({ aggregateType: 'Order', payload: { total: 50 } })).toHaveLength(1);
    expect(outbox.emitted('LargeOrderPlaced')).toHaveLength(1);
    outbox.expectEmitted('OrderPlaced', {}, 2);
  });

  it('records nothing of a call that threw: its transaction rolled back', async () => {
    await expect(orders.place('broken', 10)).rejects.toThrow('database says no');
    outbox.expectNotEmitted();
  });

  it('joins nested calls into one transaction', async () => {
    await orders.placeTwo('a', 'b');
    expect(outbox.emitted().map((e) => e.transaction)).toEqual([1, 1]);
  });

  it('fails an expectation with a message listing what was emitted', async () => {
    await orders.place('o-3', 5);
    expect(() => outbox.expectEmitted('OrderCancelled')).toThrow(OutboxExpectationError);
    expect(() => outbox.expectEmitted('OrderPlaced', { payload: { total: 6 } })).toThrow(
      /Expected OrderPlaced matching \{"payload":\{"total":6\}\} to be emitted at least once, found 0. Emitted:\n {2}#1 OrderPlaced Order\/o-3 \{"total":5\}/,
    );
    expect(() => outbox.expectNotEmitted('OrderPlaced')).toThrow(OutboxExpectationError);
  });

  it('validates events as in production', async () => {
    await expect(orders.place('has space', 1)).rejects.toThrow(/aggregateId/);
    outbox.expectNotEmitted();
  });

  it('has no relay', () => {
    expect(moduleRef.get(OutboxRelay).status().role).toBe('stopped');
  });

  it('drain() delivers pending events to the @IdempotentHandler methods, then what they emitted', async () => {
    await orders.place('o-10', 10);
    await orders.place('o-11', 11);
    const report = await outbox.drain();
    expect(summaries.applied.map((a) => [a.orderId, a.total])).toEqual([
      ['o-10', 10],
      ['o-11', 11],
    ]);
    expect(summaries.applied[0].eventId).toBe(outbox.emitted({ aggregateId: 'o-10' })[0].eventId);
    expect(summaries.audited).toEqual(['o-10:10', 'o-11:11']);
    expect(report.delivered.map((e) => e.eventType)).toEqual([
      'OrderPlaced',
      'OrderPlaced',
      'SummaryUpdated',
      'SummaryUpdated',
    ]);
    expect(outbox.pending()).toEqual([]);
    outbox.expectEmitted('SummaryUpdated', { aggregateId: 'o-11', payload: { total: 11 } });
  });

  it('applies a redelivered event once (dedupe by consumer and event id)', async () => {
    await orders.place('o-20', 20);
    await outbox.drain();
    outbox.redeliver(outbox.emitted('OrderPlaced')[0].eventId);
    await outbox.drain();
    expect(summaries.applied).toHaveLength(1);
    outbox.expectEmitted('SummaryUpdated', {}, 1);
  });

  it('retries a failing handler in the same delivery, as in production, without waiting', async () => {
    summaries.failures = 1;
    await orders.place('o-30', 30);
    const report = await outbox.drain();
    expect(report.failures).toEqual([]);
    expect(summaries.applied.map((a) => a.orderId)).toEqual(['o-30']);
    expect(moduleRef.get(OutboxConsumerMetrics).snapshot()).toMatchObject({ failures: 1 });
  });

  it('dead-letters an event after maxFailures, and goes on with the next one', async () => {
    summaries.failures = 2; // maxFailures of the handler
    await orders.placeTwo('o-40', 'o-41');
    await outbox.drain();
    expect(outbox.consumerDeadLetters()).toEqual([
      expect.objectContaining({
        consumer: 'order-summaries',
        reason: 'max-failures',
        attempts: 2,
        lastError: 'Error: summary store unavailable',
      }),
    ]);
    expect(summaries.applied.map((a) => a.orderId)).toEqual(['o-41']);
  });

  it('a database outage in a handler leaves its event (and its aggregate) pending for the next drain', async () => {
    summaries.outage = true;
    await orders.place('o-50', 50);
    const failed = await outbox.drain().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OutboxDrainError);
    expect((failed as OutboxDrainError).message).toContain(
      'OrderSummaries.onPlaced on OrderPlaced',
    );
    expect(outbox.pending().map((e) => e.aggregateId)).toEqual(['o-50']);
    expect(outbox.consumerDeadLetters()).toEqual([]);

    summaries.outage = false;
    await outbox.drain();
    expect(summaries.applied.map((a) => a.orderId)).toEqual(['o-50']);
  });
});

// Issue 18, defect 11: the testing module bound every handler without the production checks, so
// a handler production refuses (on a provider, on a connection no module serves, sharing its
// consumer name) passed here, and one of two handlers named alike silently never ran.
describe('OutboxTestingModule refuses at init() what OutboxModule refuses at bootstrap', () => {
  @Injectable()
  class HandlerOnAProvider {
    @EventPattern('OrderPlaced')
    @IdempotentHandler({ consumer: 'on-a-provider' })
    async onPlaced() {}
  }

  @Controller()
  class BillingOnAnotherConnection {
    @EventPattern('OrderPlaced')
    @IdempotentHandler({ consumer: 'billing', connectionName: 'billing' })
    async onPlaced() {}
  }

  @Controller()
  class Invoices {
    @EventPattern('OrderPlaced')
    @IdempotentHandler({ consumer: 'invoices' })
    async onPlaced() {}
  }

  @Controller()
  class AlsoInvoices {
    @EventPattern('OrderCancelled')
    @IdempotentHandler({ consumer: 'invoices' })
    async onCancelled() {}
  }

  @Controller()
  class RequestReply {
    @MessagePattern('OrderTotal')
    @IdempotentHandler({ consumer: 'totals' })
    async total() {}
  }

  const init = async (
    controllers: Array<new (...args: never[]) => unknown>,
    providers: Array<new (...args: never[]) => unknown> = [],
    options: OutboxTestingOptions = {},
  ) => {
    const moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot(options)],
      controllers,
      providers,
    }).compile();
    return moduleRef.init().then(
      async (app) => {
        await app.close();
        return undefined;
      },
      (error: unknown) => error,
    );
  };

  it.each([
    ['a handler on a provider', [], [HandlerOnAProvider], 'not-a-controller', 'HandlerOnAProvider'],
    [
      'a connectionName no module serves',
      [BillingOnAnotherConnection],
      [],
      'unknown-connection',
      "connectionName 'billing'",
    ],
    [
      'two handlers with one consumer name',
      [Invoices, AlsoInvoices],
      [],
      'duplicate-consumer',
      'Invoices.onPlaced and AlsoInvoices.onCancelled',
    ],
    ['a @MessagePattern handler', [RequestReply], [], 'not-an-event-handler', 'RequestReply'],
  ])('refuses %s', async (_what, controllers, providers, problem, named) => {
    const error = await init(controllers, providers);
    expect(error).toBeInstanceOf(IdempotentHandlerBootstrapError);
    expect(error).toMatchObject({ problem });
    expect((error as Error).message).toContain(named);
  });

  it('does not run guards, interceptors or pipes (the README says so): drain() calls the method', async () => {
    @Controller()
    class Guarded {
      readonly seen: unknown[] = [];

      @EventPattern('OrderPlaced')
      @IdempotentHandler({ consumer: 'guarded' })
      @UseGuards({ canActivate: () => false })
      @UsePipes({
        transform: () => {
          throw new Error('pipe ran');
        },
      })
      async onPlaced(@Payload() event: { total: number }, @Ctx() _context: KafkaContext) {
        this.seen.push(event.total);
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot()],
      controllers: [Guarded],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(TransactionRunner).run(async () => {
      moduleRef.get(OutboxEmitter).emit({
        eventType: 'OrderPlaced',
        aggregateType: 'Order',
        aggregateId: 'o-1',
        payload: { total: 3 },
      });
    });
    await moduleRef.get(OutboxTesting).drain();
    expect(moduleRef.get(Guarded).seen).toEqual([3]);
    await moduleRef.close();
  });

  it('serves a handler of its own connectionName', async () => {
    await expect(
      init([BillingOnAnotherConnection], [], { connectionName: 'billing' }),
    ).resolves.toBeUndefined();
  });
});
