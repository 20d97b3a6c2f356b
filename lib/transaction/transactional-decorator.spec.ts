import { Injectable, SetMetadata } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { EMITS_EVENT_METADATA, TRANSACTIONAL_METADATA } from '../common/outbox.constants';
import {
  FakeConnection,
  FakeOutboxWriter,
  fakeTransactionRunner,
} from '../testing/fakes/fake-connection';
import { resolveDeclaredEvents } from '../events/declared-event.resolver';
import type { DeclaredEvent } from '../events/emits-event.interface';
import { EmitsEvent } from '../events/emits-event.decorator';
import { InvalidOutboxEventError } from '../events/errors/invalid-outbox-event.error';
import { OutboxEmitter } from '../events/outbox.emitter';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { OutboxNotInitializedError } from './errors/outbox-not-initialized.error';
import { TransactionPropagationError } from './errors/transaction-propagation.error';
import { Propagation } from './propagation';
import { OutboxRuntimeHost } from './transaction-runtime.host';
import type { OutboxRuntime } from './transaction-runtime.host';
import { Transactional } from './transactional.decorator';

const MARK = 'test:mark';

interface Order {
  id: string;
  total: number;
}

@Injectable()
class OrderService {
  constructor(private readonly connection: FakeConnection) {}

  @Transactional()
  async create(id: string): Promise<{ id: string; total: number }> {
    await this.connection.insert('orders', { _id: id });
    return { id, total: 10 };
  }

  @EmitsEvent<Order>('OrderCreated', {
    aggregateType: 'Order',
    aggregateId: (order) => order.id,
    payload: (order, note: string) => ({ total: order.total, note }),
    headers: { traceparent: '00-1-2-01' },
  })
  @EmitsEvent('OrderAudited', {
    aggregateType: 'Order',
    aggregateId: 'fixed',
    payload: { ok: true },
  })
  async placeWithEvents(_note: string): Promise<Order> {
    await this.connection.insert('orders', { _id: 'o1' });
    return { id: 'o1', total: 10 };
  }

  @Transactional()
  async outer(): Promise<void> {
    await this.create('a');
    await this.placeWithEvents('n');
  }

  @Transactional({ propagation: Propagation.Mandatory })
  async mustJoin(): Promise<void> {}

  @EmitsEvent('Broken', {
    aggregateType: 'Order',
    aggregateId: 'x',
    payload: () => ({ f: () => 1 }),
  })
  async emitsUnserializable(): Promise<void> {
    await this.connection.insert('orders', { _id: 'broken' });
  }

  // metadata applied BEFORE the outbox decorators (they are below)
  @Transactional()
  @EventPattern('orders.created')
  @SetMetadata(MARK, 'below')
  async handlerBelow(): Promise<void> {}

  // metadata applied AFTER the outbox decorators (they are above)
  @EventPattern('orders.updated')
  @SetMetadata(MARK, 'above')
  @EmitsEvent('X', { aggregateType: 'Order', aggregateId: 'x', payload: {} })
  async handlerAbove(): Promise<void> {}
}

function start(): { connection: FakeConnection; writer: FakeOutboxWriter; runtime: OutboxRuntime } {
  const { connection, writer, runner } = fakeTransactionRunner();
  const emitter = new OutboxEmitter(runner, resolveOutboxOptions({ relay: false }), writer);
  const runtime: OutboxRuntime = {
    runner,
    emitDeclared: (declared, result, args) =>
      emitter.emitEach(resolveDeclaredEvents(declared as DeclaredEvent[], result, args)),
  };
  OutboxRuntimeHost.bind(undefined, runtime);
  return { connection, writer, runtime };
}

describe('@Transactional and @EmitsEvent', () => {
  afterEach(() => OutboxRuntimeHost.reset());

  it('throws OutboxNotInitializedError when no OutboxModule runs', async () => {
    const service = new OrderService(new FakeConnection());
    const error = await service.create('a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxNotInitializedError);
    expect((error as Error).message).toContain('OrderService.create');
    expect((error as OutboxNotInitializedError).code).toBe('OUTBOX_NOT_INITIALIZED');
  });

  it('stops working again after the module unregisters (app closed)', async () => {
    const { runtime } = start();
    const service = new OrderService(new FakeConnection());
    OutboxRuntimeHost.unbind(undefined, runtime);
    await expect(service.create('a')).rejects.toThrow(OutboxNotInitializedError);
  });

  it('runs a plain provider method in a transaction, keeping `this`, args and result', async () => {
    const { connection } = start();
    const service = new OrderService(connection);
    await expect(service.create('a')).resolves.toEqual({ id: 'a', total: 10 });
    expect(connection.transactionsStarted).toBe(1);
    expect(connection.docs('orders')).toEqual([{ _id: 'a' }]);
  });

  it('@EmitsEvent implies a transaction and emits the declared events in written order, from (result, ...args)', async () => {
    const { connection, writer } = start();
    const service = new OrderService(connection);
    await service.placeWithEvents('gift');
    expect(connection.transactionsStarted).toBe(1);
    expect(writer.insertCalls).toBe(1);
    const rows = connection.docs('outbox');
    expect(rows.map((r) => r.eventType)).toEqual(['OrderCreated', 'OrderAudited']);
    expect(rows[0]).toMatchObject({
      aggregateType: 'Order',
      aggregateId: 'o1',
      payload: { total: 10, note: 'gift' },
      headers: { traceparent: '00-1-2-01' },
    });
    expect(rows[1]).toMatchObject({ aggregateId: 'fixed', payload: { ok: true } });
  });

  it('nested decorated calls join one transaction', async () => {
    const { connection, writer } = start();
    await new OrderService(connection).outer();
    expect(connection.transactionsStarted).toBe(1);
    expect(writer.insertCalls).toBe(1);
    expect(connection.docs('orders')).toHaveLength(2);
    expect(connection.docs('outbox')).toHaveLength(2);
  });

  it('Mandatory refuses to start a transaction', async () => {
    start();
    await expect(new OrderService(new FakeConnection()).mustJoin()).rejects.toThrow(
      TransactionPropagationError,
    );
  });

  it('an unserializable declared payload fails the call with a typed error and rolls back its writes', async () => {
    const { connection } = start();
    const error = await new OrderService(connection).emitsUnserializable().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOutboxEventError);
    expect((error as InvalidOutboxEventError).code).toBe('OUTBOX_UNSERIALIZABLE_PAYLOAD');
    expect(connection.committed).toEqual([]);
  });

  it('keeps the method name', () => {
    expect(OrderService.prototype.create.name).toBe('create');
    expect(OrderService.prototype.placeWithEvents.name).toBe('placeWithEvents');
  });

  it('keeps metadata of decorators applied before it (below)', () => {
    const method = OrderService.prototype.handlerBelow;
    expect(Reflect.getMetadata(MARK, method)).toBe('below');
    expect(Reflect.getMetadata(PATTERN_METADATA, method)).toEqual(['orders.created']);
    expect(Reflect.getMetadata(TRANSACTIONAL_METADATA, method)).toEqual({});
  });

  it('keeps metadata of decorators applied after it (above)', () => {
    const method = OrderService.prototype.handlerAbove;
    expect(Reflect.getMetadata(MARK, method)).toBe('above');
    expect(Reflect.getMetadata(PATTERN_METADATA, method)).toEqual(['orders.updated']);
    expect(Reflect.getMetadata(EMITS_EVENT_METADATA, method)).toHaveLength(1);
  });

  it('wraps a method once even with several outbox decorators', async () => {
    const { connection } = start();
    await new OrderService(connection).placeWithEvents('x');
    expect(connection.attempts).toBe(1);
  });

  it.each([Propagation.Never, Propagation.Supports])(
    'refuses @EmitsEvent with propagation %s, in either decorator order',
    (propagation) => {
      const defineAbove = () => {
        class A {
          @Transactional({ propagation })
          @EmitsEvent('X', { aggregateType: 'A', aggregateId: 'a', payload: {} })
          async m(): Promise<void> {}
        }
        return A;
      };
      const defineBelow = () => {
        class B {
          @EmitsEvent('X', { aggregateType: 'A', aggregateId: 'a', payload: {} })
          @Transactional({ propagation })
          async m(): Promise<void> {}
        }
        return B;
      };
      expect(defineAbove).toThrow(TransactionPropagationError);
      expect(defineBelow).toThrow(TransactionPropagationError);
    },
  );

  it('checks eventType and aggregateType of @EmitsEvent when the class is defined', () => {
    expect(() => {
      class C {
        @EmitsEvent('Order Created', { aggregateType: 'Order', aggregateId: 'a', payload: {} })
        async m(): Promise<void> {}
      }
      return C;
    }).toThrow(/eventType of @EmitsEvent on C\.m/);
    expect(() => {
      class D {
        @EmitsEvent('OrderCreated', { aggregateType: '', aggregateId: 'a', payload: {} })
        async m(): Promise<void> {}
      }
      return D;
    }).toThrow(InvalidOutboxEventError);
  });

  it('an app closing does not disconnect another app still running', async () => {
    const first = start();
    const second = start();
    OutboxRuntimeHost.unbind(undefined, second.runtime);
    await new OrderService(first.connection).create('a');
    expect(first.connection.docs('orders')).toHaveLength(1);
    OutboxRuntimeHost.unbind(undefined, first.runtime);
    await expect(new OrderService(first.connection).create('b')).rejects.toThrow(
      OutboxNotInitializedError,
    );
  });

  it('resolves the runtime by connection name', async () => {
    const { runtime } = start();
    OutboxRuntimeHost.reset();
    OutboxRuntimeHost.bind('orders', runtime);
    class Named {
      @Transactional({ connectionName: 'orders' })
      async a(): Promise<number> {
        return 1;
      }
      @Transactional({ connectionName: 'billing' })
      async b(): Promise<number> {
        return 2;
      }
      @Transactional()
      async c(): Promise<number> {
        return 3;
      }
    }
    const named = new Named();
    await expect(named.a()).resolves.toBe(1);
    await expect(named.b()).rejects.toThrow(/connection 'billing'/);
    await expect(named.c()).resolves.toBe(3); // the only registered module
  });
});
