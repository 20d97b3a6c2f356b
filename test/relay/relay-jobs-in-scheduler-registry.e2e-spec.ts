import { MongooseModule } from '@nestjs/mongoose';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { OutboxModule, OutboxRelay } from '../../lib';
import { describeWith, mongoUriFor, uniqueName, waitFor } from '../harness';
import { testLogLevels, testRelayOptions } from './support/relay-app';

/** The relay's periodic jobs are named intervals of @nestjs/schedule when the app uses it. */
describeWith(['mongodb', 'kafka'], 'the relay’s jobs in the SchedulerRegistry', () => {
  let app: INestApplication;
  const db = uniqueName('relay-schedule');

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        MongooseModule.forRoot(mongoUriFor(db)),
        OutboxModule.forRoot({
          relay: { ...testRelayOptions(`${uniqueName('sched')}.`), name: 'jobs' },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: testLogLevels() });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('registers the lease job, and the sweep and checkpoint jobs while leading; removes them on stop', async () => {
    const registry = app.get(SchedulerRegistry);
    const relay = app.get(OutboxRelay);
    await waitFor(
      async () => relay.isLeader && registry.getIntervals().length === 3,
      30_000,
      'the jobs',
    );
    expect(registry.getIntervals().sort()).toEqual([
      'nestjs-outbox:relay:jobs:checkpoint',
      'nestjs-outbox:relay:jobs:lease',
      'nestjs-outbox:relay:jobs:sweep',
    ]);
    await relay.stop();
    expect(registry.getIntervals()).toEqual([]);
  });
});
