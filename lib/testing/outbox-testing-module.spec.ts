import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import { EmitsEvent, OutboxEmitter, OutboxRelay, Transactional } from '../index';
import { OutboxExpectationError, OutboxTesting, OutboxTestingModule } from './index';

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

describe('OutboxTestingModule in a user-style unit test', () => {
  let moduleRef: TestingModule;
  let outbox: OutboxTesting;
  let orders: OrdersService;
  const saved: string[] = [];

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot()],
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
  });
  afterAll(() => moduleRef.close());
  beforeEach(() => outbox.clear());

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
});
