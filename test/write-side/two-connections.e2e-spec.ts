import { Injectable } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import {
  getConnectionToken,
  InjectModel,
  MongooseModule,
  Prop,
  Schema,
  SchemaFactory,
} from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection, Model } from 'mongoose';
import { OutboxEmitter } from '../../lib/events/outbox.emitter';
import { OutboxModule } from '../../lib/outbox.module';
import { Transactional } from '../../lib/transaction/transactional.decorator';
import { describeWith, mongoUriFor, uniqueName } from '../harness';

@Schema({ collection: 'orders', versionKey: false })
class Order {
  @Prop({ required: true })
  _id!: string;
}

@Schema({ collection: 'invoices', versionKey: false })
class Invoice {
  @Prop({ required: true })
  _id!: string;

  @Prop({ default: 0 })
  sent!: number;
}

@Injectable()
class Billing {
  constructor(@InjectModel(Invoice.name, 'billing') private readonly invoices: Model<Invoice>) {}

  @Transactional({ connectionName: 'billing' })
  async bill(id: string, orders: Model<Order>): Promise<void> {
    await this.invoices.create([{ _id: id }]);
    // A shop model inside the billing transaction still writes in the shop transaction.
    await orders.create([{ _id: `${id}-inner` }]);
  }
}

/** Transactions of the shop database (the default connection) touching the billing database. */
@Injectable()
class Checkout {
  constructor(
    @InjectModel(Order.name) private readonly orders: Model<Order>,
    @InjectModel(Invoice.name, 'billing') private readonly invoices: Model<Invoice>,
    private readonly outbox: OutboxEmitter,
  ) {}

  /** Every kind of billing operation, inside a shop transaction. */
  @Transactional()
  async placeAndBill(id: string): Promise<number> {
    await this.orders.create([{ _id: id }]);
    await this.invoices.create([{ _id: `${id}-1` }]);
    await new this.invoices({ _id: `${id}-2` }).save();
    await this.invoices.insertMany([{ _id: `${id}-3` }]);
    await this.invoices.bulkWrite([{ insertOne: { document: { _id: `${id}-4` } } }]);
    await this.invoices.updateOne({ _id: `${id}-1` }, { $inc: { sent: 1 } });
    await this.invoices.findOne({ _id: `${id}-2` }).lean();
    await this.invoices.aggregate([{ $match: { _id: `${id}-3` } }]);
    const count = await this.invoices.countDocuments({ _id: { $regex: `^${id}-` } });
    this.outbox.emit({ eventType: 'Placed', aggregateType: 'Order', aggregateId: id, payload: {} });
    return count;
  }

  /** A billing write outside any billing transaction, then the shop transaction fails. */
  @Transactional()
  async placeBillThenFail(id: string): Promise<void> {
    await this.orders.create([{ _id: id }]);
    await this.invoices.create([{ _id: id }]);
    throw new Error('checkout failed');
  }

  /** A billing transaction nested in the shop one writes to both; then the shop one fails. */
  @Transactional()
  async placeWithBillingTransactionThenFail(id: string, billing: Billing): Promise<void> {
    await this.orders.create([{ _id: `${id}-outer` }]);
    await billing.bill(id, this.orders);
    throw new Error('checkout failed');
  }
}

describeWith(['mongodb'], 'two connections sharing one Mongoose transaction storage', () => {
  let app: INestApplicationContext;
  let shop: Connection;
  let billing: Connection;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        MongooseModule.forRoot(mongoUriFor(uniqueName('shop'))),
        MongooseModule.forRoot(mongoUriFor(uniqueName('billing')), { connectionName: 'billing' }),
        MongooseModule.forFeature([
          { name: Order.name, schema: SchemaFactory.createForClass(Order) },
        ]),
        MongooseModule.forFeature(
          [{ name: Invoice.name, schema: SchemaFactory.createForClass(Invoice) }],
          'billing',
        ),
        OutboxModule.forRoot({ relay: false }),
        OutboxModule.forRoot({ connectionName: 'billing', relay: false }),
      ],
      providers: [Checkout, Billing],
    }).compile();
    app = await moduleRef.init();
    shop = app.get<Connection>(getConnectionToken());
    billing = app.get<Connection>(getConnectionToken('billing'));
    await billing.createCollection('invoices');
    await shop.createCollection('orders');
  });

  afterAll(async () => {
    await shop?.dropDatabase().catch(() => undefined);
    await billing?.dropDatabase().catch(() => undefined);
    await app?.close();
  });

  it('a billing model inside a shop transaction works (queries, aggregate, save, create, insertMany, bulkWrite), outside it', async () => {
    await expect(app.get(Checkout).placeAndBill('o1')).resolves.toBe(4);
    expect(await shop.collection<{ _id: string }>('orders').countDocuments({ _id: 'o1' })).toBe(1);
    expect(await shop.collection('outbox').countDocuments({ aggregateId: 'o1' })).toBe(1);
    const invoice = await billing.collection<{ _id: string }>('invoices').findOne({ _id: 'o1-1' });
    expect(invoice).toMatchObject({ sent: 1 });
  });

  it('its writes are not part of the shop transaction: they stay when the shop transaction aborts', async () => {
    await expect(app.get(Checkout).placeBillThenFail('o2')).rejects.toThrow('checkout failed');
    expect(await shop.collection<{ _id: string }>('orders').countDocuments({ _id: 'o2' })).toBe(0);
    expect(
      await billing.collection<{ _id: string }>('invoices').countDocuments({ _id: 'o2' }),
    ).toBe(1);
  });

  it('inside a billing transaction nested in a shop one, shop models still write in the shop transaction', async () => {
    const checkout = app.get(Checkout);
    await expect(
      checkout.placeWithBillingTransactionThenFail('o3', app.get(Billing)),
    ).rejects.toThrow('checkout failed');
    // The billing transaction committed on its own; both shop writes aborted with the shop one.
    expect(
      await billing.collection<{ _id: string }>('invoices').countDocuments({ _id: 'o3' }),
    ).toBe(1);
    expect(
      await shop
        .collection<{ _id: string }>('orders')
        .countDocuments({ _id: { $in: ['o3-outer', 'o3-inner'] } }),
    ).toBe(0);
  });
});
