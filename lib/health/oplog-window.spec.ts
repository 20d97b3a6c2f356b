import { mongo } from 'mongoose';
import { probeOplogWindow } from './oplog-window.probe';
import { resumeTokenTime } from './resume-token.time';

const now = new Date('2026-12-01T12:00:00Z');
const unauthorized = () =>
  Promise.reject(Object.assign(new Error('not authorized on local'), { code: 13 }));

/** A client whose oplog read and serverStatus answer as told. */
function client(oplog: () => Promise<unknown>, serverStatus: () => Promise<unknown>) {
  return {
    db: (name: string) =>
      name === 'local'
        ? { collection: () => ({ find: () => ({ next: oplog }) }) }
        : { command: serverStatus },
  } as unknown as mongo.MongoClient;
}

describe('the oplog window', () => {
  it("is the oldest local.oplog.rs entry's time to the server's now", async () => {
    const first = mongo.Timestamp.fromBits(1, Math.floor(now.getTime() / 1000) - 3600);
    const window = await probeOplogWindow(
      client(async () => ({ ts: first }), unauthorized),
      now,
    );
    expect(window).toEqual({
      available: true,
      firstEntryAt: new Date(now.getTime() - 3600_000),
      windowMs: 3600_000,
      source: 'local.oplog.rs',
    });
  });

  it("falls back to serverStatus's oplog.earliestOptime", async () => {
    const earliest = mongo.Timestamp.fromBits(0, Math.floor(now.getTime() / 1000) - 60);
    const window = await probeOplogWindow(
      client(unauthorized, async () => ({ oplog: { earliestOptime: earliest } })),
      now,
    );
    expect(window).toMatchObject({ available: true, windowMs: 60_000, source: 'serverStatus' });
  });

  it('says why, naming the missing privilege, instead of failing', async () => {
    const window = await probeOplogWindow(client(unauthorized, unauthorized), now);
    expect(window.available).toBe(false);
    expect(window.available === false && window.reason).toMatch(
      /local\.oplog\.rs: not authorized \(grant the clusterMonitor role.*serverStatus: not authorized/,
    );
  });

  it('is unavailable on a server without an oplog', async () => {
    const window = await probeOplogWindow(
      client(
        async () => null,
        async () => ({ ok: 1 }),
      ),
      now,
    );
    expect(window).toEqual({
      available: false,
      reason: 'local.oplog.rs has no entries; serverStatus has no oplog section',
    });
  });
});

describe('the time of a resume token', () => {
  it('is read from a KeyString token (MongoDB 4.2 and later)', () => {
    const seconds = Math.floor(now.getTime() / 1000);
    const data = `82${seconds.toString(16).padStart(8, '0')}00000001` + '2B0229296E5A1004';
    expect(resumeTokenTime({ _data: data })).toEqual(now);
  });

  it('is unknown for other token shapes', () => {
    expect(resumeTokenTime({ _data: '000000000000420f' })).toBeUndefined();
    expect(resumeTokenTime('token')).toBeUndefined();
    expect(resumeTokenTime(undefined)).toBeUndefined();
  });
});
