import {
  Body,
  Controller,
  Injectable,
  Module,
  Post,
  type INestApplication,
  type MiddlewareConsumer,
  type NestMiddleware,
  type NestModule,
} from '@nestjs/common';
import { getConnectionToken, InjectConnection, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection } from 'mongoose';
import { Schema } from 'mongoose';
import {
  EmitsEvent,
  OutboxEmitter,
  OutboxModule,
  runInTenant,
  Transactional,
  type OutboxTenantsOptions,
} from '../../lib';
import { consumerMongoUri, testLogLevels } from '../consumer/consumer-app.fixtures';
import { uniqueName } from '../harness';

const OrderSchema = new Schema({ _id: String, total: Number }, { versionKey: false });

/** As a user would: the tenant from the `x-tenant` request header, for the whole request. */
@Injectable()
class TenantMiddleware implements NestMiddleware {
  use(request: { headers: Record<string, unknown> }, _response: unknown, next: () => void): void {
    const tenant = request.headers['x-tenant'];
    if (typeof tenant === 'string' && tenant !== '') runInTenant(tenant, next);
    else next();
  }
}

/** Orders live in the tenant's database: the model of `connection.useDb(databaseOf(tenant))`. */
@Injectable()
export class TenantOrders {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly outbox: OutboxEmitter,
  ) {}

  /** Set by the test: the tenant database of a tenant id. */
  static databaseOf: (tenant: string) => string = (tenant) => tenant;

  private orders(tenant: string) {
    const db = this.connection.useDb(TenantOrders.databaseOf(tenant), { useCache: true });
    return db.models.Order ?? db.model('Order', OrderSchema, 'orders');
  }

  @EmitsEvent<{ id: string; total: number }>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => order.id,
    payload: (order) => ({ total: order.total }),
  })
  async place(tenant: string, id: string, total: number, fail = false) {
    await this.orders(tenant).create([{ _id: id, total }]);
    if (fail) throw new Error('payment declined');
    return { id, total };
  }

  /**
   * One transaction: the order and its event in the current tenant's database, and an event of
   * `other` (another tenant, another database) about `otherId`.
   */
  @Transactional()
  async placeForTwo(tenant: string, id: string, other: string, otherId: string): Promise<void> {
    await this.orders(tenant).create([{ _id: id, total: 1 }]);
    this.outbox.emit({
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: id,
      payload: {},
    });
    runInTenant(other, () =>
      this.outbox.emit({
        eventType: 'OrderShared',
        aggregateType: 'Order',
        aggregateId: otherId,
        payload: {},
      }),
    );
  }

  /** A scheduled reminder of the current tenant. */
  @Transactional()
  async remind(id: string, availableAt: Date): Promise<string> {
    return this.outbox.emit(
      { eventType: 'PaymentDue', aggregateType: 'Order', aggregateId: id, payload: {} },
      { availableAt },
    );
  }

  @Transactional()
  async cancel(eventId: string) {
    return this.outbox.cancel(eventId);
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly orders: TenantOrders) {}

  @Post()
  async place(@Body() body: { tenant: string; id: string; total: number; fail?: boolean }) {
    return this.orders.place(body.tenant, body.id, body.total, body.fail);
  }
}

@Module({ controllers: [OrdersController], providers: [TenantOrders], exports: [TenantOrders] })
class TenantOrdersModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(TenantMiddleware).forRoutes('*');
  }
}

export interface TenantApp {
  app: INestApplication;
  url: string;
  connection: Connection;
  orders: TenantOrders;
  /** A database of the same client (to read what landed where). */
  db(name: string): Connection;
  /** Drops the tenant databases it was started with (a list) and its app database, then closes. */
  dropAndClose(): Promise<void>;
}

/** An HTTP app: MongooseModule on the app database, OutboxModule with `tenants`, the orders. */
export async function startTenantApp(tenants: OutboxTenantsOptions): Promise<TenantApp> {
  TenantOrders.databaseOf = tenants.databaseOf ?? ((tenant) => tenant);
  const appDb = uniqueName('tenants_app');
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(consumerMongoUri(appDb)),
      OutboxModule.forRoot({ isGlobal: true, relay: false, scheduledEvents: true, tenants }),
      TenantOrdersModule,
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: testLogLevels() });
  await app.listen(0, '127.0.0.1');
  const connection = app.get<Connection>(getConnectionToken());
  const db = (name: string) => connection.useDb(name, { useCache: true });
  return {
    app,
    url: await app.getUrl(),
    connection,
    orders: app.get(TenantOrders),
    db,
    dropAndClose: async () => {
      const listed = Array.isArray(tenants.databases) ? tenants.databases : [];
      for (const name of [...listed, appDb])
        await db(name)
          .dropDatabase()
          .catch(() => undefined);
      await app.close();
    },
  };
}

/** POST /orders as tenant `tenant` (no header when undefined); the response status. */
export async function placeOrder(
  url: string,
  tenant: string | undefined,
  body: { tenant: string; id: string; total: number; fail?: boolean },
): Promise<number> {
  const response = await fetch(`${url.replace('[::1]', '127.0.0.1')}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(tenant ? { 'x-tenant': tenant } : {}) },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}
