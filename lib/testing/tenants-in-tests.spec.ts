import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import {
  EmitsEvent,
  OutboxEmitter,
  OutboxTenantNotResolvedError,
  runInTenant,
  Transactional,
} from '../index';
import { OutboxTesting, OutboxTestingModule } from './index';
import { RecordingOutboxWriter } from './recording-outbox.writer';

const DAY = 24 * 60 * 60 * 1000;

/** Small tenants share one database; the others have their own. */
const databaseOf = (tenant: string) =>
  tenant.startsWith('small-') ? 'tenants_shared' : `tenant_${tenant}`;

@Injectable()
class Orders {
  constructor(private readonly outbox: OutboxEmitter) {}

  @EmitsEvent<{ id: string }>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => order.id,
    payload: (order) => ({ id: order.id }),
  })
  async place(id: string): Promise<{ id: string }> {
    return { id };
  }

  /** One transaction that emits for the current tenant and for `other`. */
  @Transactional()
  async transfer(id: string, other: string): Promise<void> {
    this.outbox.emit({
      eventType: 'SentOut',
      aggregateType: 'Order',
      aggregateId: id,
      payload: {},
    });
    runInTenant(other, () =>
      this.outbox.emit({
        eventType: 'TakenIn',
        aggregateType: 'Order',
        aggregateId: id,
        payload: {},
      }),
    );
  }

  @Transactional()
  async remind(id: string): Promise<string> {
    return this.outbox.emit(
      { eventType: 'Reminder', aggregateType: 'Order', aggregateId: id, payload: {} },
      { delayMs: DAY },
    );
  }

  @Transactional()
  async cancel(eventId: string) {
    return this.outbox.cancel(eventId);
  }
}

describe('OutboxTestingModule with tenants: each event in its tenant database', () => {
  let moduleRef: TestingModule;
  let outbox: OutboxTesting;
  let orders: Orders;
  let writer: RecordingOutboxWriter;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot({ scheduledEvents: true, tenants: { databaseOf } })],
      providers: [Orders],
    }).compile();
    await moduleRef.init();
    outbox = moduleRef.get(OutboxTesting);
    orders = moduleRef.get(Orders);
    writer = moduleRef.get(RecordingOutboxWriter);
  });
  afterAll(() => moduleRef.close());
  beforeEach(() => {
    outbox.clear();
    jest.restoreAllMocks();
  });

  it('an emit whose tenant cannot be resolved throws before anything is written', async () => {
    const insert = jest.spyOn(writer, 'insert');
    await expect(orders.place('o-1')).rejects.toBeInstanceOf(OutboxTenantNotResolvedError);
    await expect(orders.place('o-1')).rejects.toThrow(/emit of OrderPlaced: no tenant is known/);
    expect(insert).not.toHaveBeenCalled();
    expect(outbox.emitted()).toEqual([]);
  });

  it("records each event's tenant and database", async () => {
    await runInTenant('acme', () => orders.place('o-1'));
    await runInTenant('globex', () => orders.place('o-2'));
    expect(
      outbox
        .emitted()
        .map(({ tenant, database, aggregateId }) => ({ tenant, database, aggregateId })),
    ).toEqual([
      { tenant: 'acme', database: 'tenant_acme', aggregateId: 'o-1' },
      { tenant: 'globex', database: 'tenant_globex', aggregateId: 'o-2' },
    ]);
    expect(outbox.emitted({ tenant: 'globex' }).map((e) => e.aggregateId)).toEqual(['o-2']);
  });

  it('one transaction may emit for two tenants: each event goes to its own database', async () => {
    const insert = jest.spyOn(writer, 'insert');
    await runInTenant('acme', () => orders.transfer('o-3', 'globex'));
    const events = outbox.emitted();
    expect(events.map((e) => [e.eventType, e.tenant, e.database])).toEqual([
      ['SentOut', 'acme', 'tenant_acme'],
      ['TakenIn', 'globex', 'tenant_globex'],
    ]);
    expect(new Set(events.map((e) => e.transaction)).size).toBe(1);
    // One insert per database, both in the same session.
    expect(insert.mock.calls.map((call) => call[3])).toEqual(['tenant_acme', 'tenant_globex']);
    expect(insert.mock.calls[0][1]).toBe(insert.mock.calls[1][1]);
  });

  it('two tenants sharing a database: one database, each event with its own tenant', async () => {
    await runInTenant('small-1', () => orders.place('o-4'));
    await runInTenant('small-2', () => orders.place('o-5'));
    expect(outbox.emitted().map((e) => [e.tenant, e.database])).toEqual([
      ['small-1', 'tenants_shared'],
      ['small-2', 'tenants_shared'],
    ]);
  });

  it("a scheduled event is cancelled in its tenant's database, not found from another", async () => {
    const reminderId = await runInTenant('acme', () => orders.remind('o-6'));
    await expect(runInTenant('globex', () => orders.cancel(reminderId))).resolves.toMatchObject({
      outcome: 'not-found',
    });
    await expect(runInTenant('acme', () => orders.cancel(reminderId))).resolves.toMatchObject({
      outcome: 'cancelled',
    });
    expect(outbox.cancelled().map((e) => e.tenant)).toEqual(['acme']);
  });
});
