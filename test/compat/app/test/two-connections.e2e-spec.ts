import { randomUUID } from 'node:crypto';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { getConnectionToken, InjectModel, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { type Connection, type Model, Schema } from 'mongoose';
import { InjectOutboxEmitter, OutboxEmitter, OutboxModule, Transactional } from 'nestjs-outbox';
import { appConfig } from '../src/app.config.js';

interface Doc {
  _id: string;
  n?: number;
}
const schema = () => new Schema<Doc>({ _id: String, n: Number }, { versionKey: false });

@Injectable()
class Ledger {
  constructor(
    @InjectModel('Entry', 'ledger') private readonly entries: Model<Doc>,
    @InjectOutboxEmitter('ledger') private readonly outbox: OutboxEmitter,
  ) {}

  /** A transaction of the second database, called inside one of the first. */
  @Transactional({ connectionName: 'ledger' })
  async record(id: string, orders: Model<Doc>): Promise<void> {
    await this.entries.create([{ _id: id }]);
    this.outbox.emit({
      eventType: 'Recorded',
      aggregateType: 'Entry',
      aggregateId: id,
      payload: {},
    });
    await orders.create([{ _id: `${id}-inner` }]); // still the first database's transaction
  }
}

@Injectable()
class Shop {
  constructor(
    @InjectModel('Order') readonly orders: Model<Doc>,
    @InjectModel('Entry', 'ledger') private readonly entries: Model<Doc>,
  ) {}

  /** Every kind of operation on the second database's model, inside a transaction of the first. */
  @Transactional()
  async placeAndTouchLedger(id: string): Promise<number> {
    await this.orders.create([{ _id: id }]);
    await this.entries.create([{ _id: `${id}-a` }]);
    await new this.entries({ _id: `${id}-b` }).save();
    await this.entries.insertMany([{ _id: `${id}-c` }]);
    await this.entries.bulkWrite([{ insertOne: { document: { _id: `${id}-d` } } }]);
    await this.entries.updateOne({ _id: `${id}-a` }, { $set: { n: 1 } });
    await this.entries.aggregate([{ $match: { n: 1 } }]);
    return this.entries.countDocuments({ _id: { $regex: `^${id}-` } });
  }

  @Transactional()
  async placeThenFail(id: string, ledger: Ledger): Promise<void> {
    await this.orders.create([{ _id: id }]);
    await ledger.record(id, this.orders);
    throw new Error('checkout failed');
  }
}

describe('two databases, each with its OutboxModule', () => {
  const run = randomUUID().slice(0, 8);
  let app: INestApplicationContext;
  let shop: Connection;
  let ledger: Connection;

  beforeAll(async () => {
    const { mongoUri } = appConfig();
    const moduleRef = await Test.createTestingModule({
      imports: [
        MongooseModule.forRoot(mongoUri, { dbName: `compat_shop_${run}` }),
        MongooseModule.forRoot(mongoUri, {
          dbName: `compat_ledger_${run}`,
          connectionName: 'ledger',
        }),
        MongooseModule.forFeature([{ name: 'Order', schema: schema() }]),
        MongooseModule.forFeature([{ name: 'Entry', schema: schema() }], 'ledger'),
        OutboxModule.forRoot({ relay: false }),
        OutboxModule.forRoot({ connectionName: 'ledger', relay: false }),
      ],
      providers: [Shop, Ledger],
    }).compile();
    app = await moduleRef.init();
    shop = app.get<Connection>(getConnectionToken());
    ledger = app.get<Connection>(getConnectionToken('ledger'));
  }, 120_000);

  afterAll(async () => {
    await shop?.dropDatabase().catch(() => undefined);
    await ledger?.dropDatabase().catch(() => undefined);
    await app?.close(); // the Kafka consumer leaves its group: seconds, not milliseconds
  }, 60_000);

  it("a model of the second database works inside the first database's transaction", async () => {
    await expect(app.get(Shop).placeAndTouchLedger('o1')).resolves.toBe(4);
  });

  it('a nested transaction of the second database commits on its own; the first still aborts', async () => {
    const shopService = app.get(Shop);
    await expect(shopService.placeThenFail('o2', app.get(Ledger))).rejects.toThrow(
      'checkout failed',
    );
    expect(await ledger.collection<{ _id: string }>('entries').countDocuments({ _id: 'o2' })).toBe(
      1,
    );
    expect(await ledger.collection('outbox').countDocuments({ aggregateId: 'o2' })).toBe(1);
    expect(await shopService.orders.countDocuments({ _id: { $in: ['o2', 'o2-inner'] } })).toBe(0);
  });
});
