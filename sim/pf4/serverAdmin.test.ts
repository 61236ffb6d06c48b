/**
 * PF4 server maintenance besides SrvRestart: the chart-history sync, the feeder restart with its tick gap, the
 * LiveUpdate broadcast and push notifications; each needs its right, and none of them drops the manager connection.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';
import { withoutServerOnly } from './serverOnlyFields.js';
import { startSim, type RunningSim } from '../index.js';
import { ManagerClient } from '../../test/support/sim/managerClient.js';

const T = (hms: string) => Date.parse(`2026-01-06T${hms}Z`); // a Tuesday
const journal = (h: ReturnType<typeof pf4Harness>, mark: number) =>
  h.world
    .journalEntries()
    .slice(mark)
    .map((l) => l.message);
const chart = (h: ReturnType<typeof pf4Harness>, symbol: string, period: string) =>
  h.call('ChartRequest', {
    symbol,
    period,
    start: '2026-01-06T00:00:00Z',
    end: '2026-01-07T00:00:00Z',
    mode: 'RangeIn',
  });

describe('SrvChartsSync', () => {
  /** EURUSD and GBPUSD ticks between 10:00 and 10:20, so both have minute bars and an H1 bar built from them. */
  function withHistory() {
    const h = pf4Harness({ symbols: 2 });
    const feed = h.world.feed;
    feed.inject('EURUSD', 1.1, 1.1001, T('10:00:10'));
    feed.inject('EURUSD', 1.1008, 1.1009, T('10:05:10'));
    feed.inject('EURUSD', 1.0995, 1.0996, T('10:19:00'));
    feed.inject('GBPUSD', 1.25, 1.2501, T('10:02:00'));
    feed.inject('GBPUSD', 1.2504, 1.2505, T('10:03:00'));
    return h;
  }
  const hour = { time: '2026-01-06T10:00:00.000Z', open: 1.1, high: 1.1008, low: 1.0995, close: 1.0995, volume: 3 };

  it('brings every longer period of every symbol back in line with the minute history', () => {
    const h = withHistory();
    expect(chart(h, 'EURUSD', 'H1')).toEqual([hour]);
    // A manager write leaves the hour bar disagreeing with its minutes; another symbol's day bar is removed.
    h.call('ChartUpdate', { symbol: 'EURUSD', period: 'H1', record: { rates: [{ ...hour, high: 1.2, close: 1.1 }] } });
    h.call('ChartDelete', { symbol: 'GBPUSD', period: 'D1', record: { rates: [{ time: '2026-01-06T00:00:00Z' }] } });
    expect(chart(h, 'GBPUSD', 'D1')).toEqual([]);
    const mark = h.world.journalEntries().length;
    expect(h.call('SrvChartsSync')).toBe(true);
    expect(chart(h, 'EURUSD', 'H1')).toEqual([hour]);
    expect(chart(h, 'GBPUSD', 'D1')).toEqual([
      { time: '2026-01-06T00:00:00.000Z', open: 1.25, high: 1.2504, low: 1.25, close: 1.2504, volume: 2 },
    ]);
    expect(journal(h, mark)).toEqual(['charts synchronized: 2 bars of 2 symbols corrected']);
  });

  it('is idempotent: a second sync changes nothing', () => {
    const h = withHistory();
    h.call('ChartUpdate', {
      symbol: 'EURUSD',
      period: 'H4',
      record: { rates: [{ ...hour, time: '2026-01-06T08:00:00Z', low: 1 }] },
    });
    h.call('SrvChartsSync');
    const bars = ['M1', 'M5', 'H1', 'H4', 'D1', 'W1', 'Mn1'].map((p) => chart(h, 'EURUSD', p));
    const mark = h.world.journalEntries().length;
    expect(h.call('SrvChartsSync')).toBe(true);
    expect(['M1', 'M5', 'H1', 'H4', 'D1', 'W1', 'Mn1'].map((p) => chart(h, 'EURUSD', p))).toEqual(bars);
    expect(journal(h, mark)).toEqual(['charts synchronized: 0 bars of 2 symbols corrected']);
  });

  it('needs the admin right', () => {
    const h = pf4Harness();
    expect(h.fails('SrvChartsSync', {}, ['manager'])).toEqual({
      code: R.NotEnoughRights,
      message: 'SrvChartsSync needs the admin right',
    });
  });
});

describe('SrvFeedsRestart', () => {
  it('restarts every running feeder, leaving a brief gap in the quotes', () => {
    const h = pf4Harness();
    const mark = h.world.journalEntries().length;
    const at = Date.now();
    expect(h.world.feed.pausedAt(at)).toBe(false);
    expect(h.call('SrvFeedsRestart')).toBe(true);
    expect(journal(h, mark)).toEqual(['feeder Main quotes restarted', 'feeder News wire restarted']);
    expect(h.world.feed.pausedAt(at)).toBe(true);
    expect(h.world.feed.pausedAt(at + 60_000)).toBe(false);
  });

  it('leaves stopped feeders alone, and no gap when no running feeder carries quotes', () => {
    const h = pf4Harness();
    const main = withoutServerOnly('feeder', h.call('CfgRequestFeeder')[0]);
    h.call('CfgUpdateFeeder', { record: { ...main, enable: 0 } });
    const mark = h.world.journalEntries().length;
    const at = Date.now();
    expect(h.call('SrvFeedsRestart')).toBe(true);
    expect(journal(h, mark)).toEqual(['feeder News wire restarted']);
    expect(h.world.feed.pausedAt(at)).toBe(false);
  });

  it('is idempotent and needs the admin right', () => {
    const h = pf4Harness();
    const mark = h.world.journalEntries().length;
    h.call('SrvFeedsRestart');
    h.call('SrvFeedsRestart');
    expect(journal(h, mark)).toEqual([
      'feeder Main quotes restarted',
      'feeder News wire restarted',
      'feeder Main quotes restarted',
      'feeder News wire restarted',
    ]);
    expect(h.call('CfgRequestFeeder').map((f: { enable: number }) => f.enable)).toEqual([1, 1]);
    expect(h.fails('SrvFeedsRestart', {}, ['manager']).code).toBe(R.NotEnoughRights);
  });
});

describe('SrvLiveUpdateStart', () => {
  it('starts the broadcast of every enabled LiveUpdate configuration', () => {
    const h = pf4Harness();
    h.call('CfgUpdateLiveUpdate', {
      record: {
        company: 'Simulated Markets Ltd',
        path: '/liveupdate/manager',
        version: 4,
        build: 1425,
        maxConnect: 10,
        connections: 0,
        type: 1,
        enable: 1,
        totalFiles: 7,
      },
    });
    h.call('CfgUpdateLiveUpdate', {
      record: {
        company: 'Old Brand',
        path: '/liveupdate/old',
        version: 4,
        build: 1300,
        maxConnect: 10,
        connections: 0,
        type: 0,
        enable: 0,
        totalFiles: 3,
      },
    });
    const mark = h.world.journalEntries().length;
    expect(h.call('SrvLiveUpdateStart')).toBe(true);
    expect(journal(h, mark)).toEqual([
      'LiveUpdate started: Simulated Markets Ltd /liveupdate/terminal build 1420',
      'LiveUpdate started: Simulated Markets Ltd /liveupdate/manager build 1425',
    ]);
  });

  it('starts nothing when no configuration is enabled, and needs the admin right', () => {
    const h = pf4Harness();
    h.call('CfgDeleteLiveUpdate', { pos: 0 });
    const mark = h.world.journalEntries().length;
    expect(h.call('SrvLiveUpdateStart')).toBe(true);
    expect(journal(h, mark)).toEqual(['LiveUpdate: no enabled configuration to broadcast']);
    expect(h.fails('SrvLiveUpdateStart', {}, ['manager']).code).toBe(R.NotEnoughRights);
  });
});

describe('NotificationsSend', () => {
  it('sends a push notification to the given accounts and journals it', () => {
    const h = pf4Harness();
    const mark = h.world.journalEntries().length;
    expect(
      h.call('NotificationsSend', { record: { logins: [100001, 100002], message: 'Markets close early today' } }),
    ).toBe(true);
    expect(journal(h, mark)).toEqual(['notification to 2 accounts (100001, 100002): Markets close early today']);
  });

  it('refuses a notification without a message or accounts, or for an unknown account, naming the field', () => {
    const h = pf4Harness();
    const mark = h.world.journalEntries().length;
    expect(h.fails('NotificationsSend', { record: { logins: [100001] } })).toEqual({
      code: R.InvalidData,
      message: 'record.message is required',
    });
    expect(h.fails('NotificationsSend', { record: { logins: [100001], message: '' } }).message).toBe(
      'record.message is required',
    );
    expect(h.fails('NotificationsSend', { record: { message: 'hello' } }).message).toBe(
      'record.logins must not be empty',
    );
    expect(h.fails('NotificationsSend', { record: { logins: [], message: 'hello' } }).message).toBe(
      'record.logins must not be empty',
    );
    expect(h.fails('NotificationsSend', { record: { logins: [100001, 4242], message: 'hello' } }).message).toBe(
      'record.logins: login 4242 not found',
    );
    expect(h.fails('NotificationsSend', { record: { logins: [100001], message: 'x'.repeat(256) } }).message).toBe(
      'record.message must be at most 255 characters',
    );
    expect(h.fails('NotificationsSend', { record: { logins: ['100001'], message: 'hello' } }).message).toMatch(
      /^record\.logins\.0: /,
    );
    expect(
      h.fails('NotificationsSend', { record: { logins: [100001], message: 'hello', title: 'x' } }).message,
    ).toMatch(/^record\.title: /);
    expect(journal(h, mark)).toEqual([]);
  });

  it('needs the notifications right', () => {
    const h = pf4Harness();
    expect(h.fails('NotificationsSend', { record: { logins: [100001], message: 'hi' } }, ['manager', 'admin'])).toEqual(
      { code: R.NotEnoughRights, message: 'NotificationsSend needs the notifications right' },
    );
    expect(h.call('NotificationsSend', { record: { logins: [100001], message: 'hi' } }, ['notifications'])).toBe(true);
  });
});

describe('over a manager connection', () => {
  let sim: RunningSim;
  const clients: ManagerClient[] = [];

  beforeAll(async () => {
    sim = await startSim({
      config: {
        servers: [
          {
            name: 'pf4',
            family: 'PF4',
            accounts: 10,
            trades: 5,
            symbols: 3,
            ticksPerSecond: 50,
            managers: [
              { login: 1000, password: 'admin-pw' },
              { login: 2000, password: 'desk-pw', rights: ['manager'] },
            ],
          },
        ],
      },
    });
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  afterAll(async () => {
    await sim.close();
  });

  async function loggedIn(login: number, password: string, pump: boolean): Promise<ManagerClient> {
    const client = await ManagerClient.connect(sim.port, 'pf4');
    clients.push(client);
    await client.ok('login', { login, password, pump });
    if (pump) await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    return client;
  }

  it('keeps the session through maintenance, and quotes resume after the feeder restart', async () => {
    const admin = await loggedIn(1000, 'admin-pw', true);
    expect(await admin.ok('SrvChartsSync')).toBe(true);
    expect(await admin.ok('SrvLiveUpdateStart')).toBe(true);
    expect(await admin.ok('SrvFeedsRestart')).toBe(true);
    const restartedAt = admin.events.length;
    await admin.waitForEvent((e) => admin.events.indexOf(e) >= restartedAt && e.event === 'ticks');
    expect(admin.closed).toBe(false);
    expect(await admin.ok('Ping')).toMatchObject({ time: expect.any(String) });
  });

  it('refuses maintenance to a manager without the admin right and keeps the connection', async () => {
    const desk = await loggedIn(2000, 'desk-pw', false);
    for (const cmd of ['SrvChartsSync', 'SrvLiveUpdateStart', 'SrvFeedsRestart']) {
      expect(await desk.fails(cmd)).toEqual({ code: R.NotEnoughRights, message: `${cmd} needs the admin right` });
    }
    expect(desk.closed).toBe(false);
    expect(await desk.ok('UserRecordRequest', { login: 100000 })).toMatchObject({ login: 100000 });
  });
});
