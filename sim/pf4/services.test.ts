/**
 * PF4 reports and side services on a small world: closed-trade and daily reports, the daily-sync snapshot, journal,
 * performance, news, mail, online accounts, backup files and restores, and the users and trades sync sessions.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

const DAY = 86_400_000;
const today = () => Math.floor(Date.now() / DAY) * DAY;

function traded() {
  const h = pf4Harness({ accounts: 10, trades: 10 });
  h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1, ask: 1.1001 });
  const { login } = h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Reporter' } });
  h.call('TradeTransaction', {
    tradeTransactionType: 'BrBalance',
    tradeCommand: 'Balance',
    orderBy: login,
    price: 5000,
  });
  const trade = h.call('TradeTransaction', {
    tradeTransactionType: 'BrOrderOpen',
    orderBy: login,
    symbol: 'EURUSD',
    tradeCommand: 'Buy',
    volume: 10,
  });
  h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.102, ask: 1.1021 });
  h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order });
  return { h, login: login as number, order: trade.order as number };
}

describe('reports', () => {
  // Reports are cut by the UTC day: the server's clock is fixed at noon, so no test straddles midnight.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 5, 3, 12, 0, 0));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists closed trades of the asked logins in the window, leaving balance entries out', () => {
    const { h, login, order } = traded();
    const window = { from: new Date(today()).toISOString(), to: new Date(today() + DAY).toISOString() };
    const rows = h.call('ReportsRequest', { ...window, logins: [login, 42] });
    expect(rows.map((r: { order: number }) => r.order)).toEqual([order]);
    records.PF4Trade.parse(rows[0]);
    expect(h.fails('ReportsRequest', { ...window, logins: [] }).code).toBe(R.InvalidData);
    expect(h.fails('ReportsRequest', { ...window, logins: [login], name: 'x'.repeat(33) }).code).toBe(R.InvalidData);
  });

  it('computes daily rows from the history, one per account and day', () => {
    const { h, login } = traded();
    const from = new Date(today() - DAY).toISOString();
    const to = new Date(today()).toISOString();
    const rows = h.call('DailyReportsRequest', { from, to, logins: [login] });
    expect(rows).toHaveLength(2);
    for (const row of rows) records.PF4DailyReport.parse(row);
    expect(rows[1]).toMatchObject({
      login,
      balancePrev: 0,
      deposit: 5000,
      profitClosed: 19,
      balance: 5019,
      equity: 5019,
    });
    const byLogin = h.call('DailyReportsRequestEx', { from, to, logins: [login] });
    expect(Object.keys(byLogin)).toEqual([String(login)]);
    expect(byLogin[String(login)]).toEqual(rows);
  });

  it('holds a daily-sync snapshot per connection and drops it after a successful read', () => {
    const h = pf4Harness({ accounts: 5 });
    expect(h.call('DailySyncRead')).toEqual([]);
    expect(h.call('DailySyncStart', { timestamp: 0 })).toBe(true);
    const rows = h.call('DailySyncRead');
    expect(rows.map((r: { login: number }) => r.login)).toEqual([100000, 100001, 100002, 100003, 100004]);
    expect(h.call('DailySyncRead')).toEqual([]);
    h.call('DailySyncStart', { timestamp: Math.floor(Date.now() / 1000) + DAY / 1000 });
    expect(h.call('DailySyncRead')).toEqual([]);
  });

  it('answers performance snapshots from a time on, and the journal by type and filter', () => {
    const { h, login } = traded();
    const perf = h.call('PerformanceRequest', { from: '2025-05-31T23:30:00Z' });
    expect(perf).toHaveLength(30);
    for (const p of perf) records.PF4Performance.parse(p);
    expect(h.fails('PerformanceRequest', { from: '2040-01-01T00:00:00Z' }).code).toBe(R.InvalidData);
    const from = new Date(Date.now() - 60_000).toISOString();
    const trades = h.call('JournalRequest', { from, mode: 'Trades', filter: String(login) });
    expect(trades.length).toBe(3);
    for (const line of trades) records.PF4ServerLog.parse(line);
    expect(h.call('JournalRequest', { from, mode: 'Logins' })).toEqual([]);
  });

  it('drops the connection for reports without the permission, and refuses Adm commands without admin', () => {
    const h = pf4Harness();
    const window = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', logins: [100000] };
    expect(h.fails('ReportsRequest', window, ['manager']).message).toBe('DROPPED');
    expect(h.fails('DailyReportsRequest', window, ['reports']).message).toBe('DROPPED');
    expect(h.fails('AdmBalanceCheck', { login: 100000 }, ['manager']).code).toBe(R.NotEnoughRights);
    expect(
      h.fails(
        'TradeTransaction',
        { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: 100000, price: 1 },
        ['trades'],
      ).code,
    ).toBe(R.NotEnoughRights);
    expect(
      h.call(
        'TradeTransaction',
        { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: 100000, price: 1 },
        ['money'],
      ),
    ).toMatchObject({ tradeCommand: 'Balance' });
  });
});

describe('news, mail and online accounts', () => {
  it('serves news headers, bodies and positions, and pushes sent news', () => {
    const h = pf4Harness();
    const topics = h.call('NewsRequest');
    expect(topics).toHaveLength(20);
    expect(h.call('NewsTotal')).toBe(20);
    for (const topic of topics) records.PF4NewsTopic.parse(topic);
    expect(h.call('NewsTopicGet', { pos: 3 })).toEqual(topics[3]);
    expect(h.fails('NewsTopicGet', { pos: 20 }).code).toBe(R.InvalidData);
    expect(h.call('NewsBodyGet', { key: topics[0].key })).toContain(topics[0].topic);
    expect(h.call('NewsBodyRequest', { key: topics[0].key })).toBe(true);
    h.call('NewsSend', { record: { topic: 'Breaking', category: 'Test', body: 'Body text', highPriority: true } });
    const event = h.events.find((e) => e.kind === 'news');
    expect(event).toMatchObject({ op: 'add', record: { key: 21, topic: 'Breaking', priority: 1 } });
    expect(h.call('NewsBodyGet', { key: 21 })).toBe('Body text');
  });

  it('sends mail and answers the last one', () => {
    const h = pf4Harness();
    h.call('MailSend', {
      record: { senderLogin: 1000, senderName: 'Desk', subject: 'Hello', body: 'Margin call soon', logins: [100000] },
    });
    expect(h.call('MailLast')).toBe('Margin call soon');
    const mails = h.call('MailsRequest');
    for (const mail of mails) records.PF4MailBox.parse(mail);
    expect(h.events.find((e) => e.kind === 'mail')?.record.subject).toBe('Hello');
  });

  it('pages online accounts and pushes logins and logouts', () => {
    const h = pf4Harness({ accounts: 400 });
    const first = h.call('OnlineRequest', { limit: 5 });
    expect(first.items).toHaveLength(5);
    for (const item of first.items) records.PF4Online.parse(item);
    const all = h.call('OnlineRequest').items;
    expect(all.map((o: { login: number }) => o.login)).toEqual(
      [...all.map((o: { login: number }) => o.login)].sort((a, b) => a - b),
    );
    h.world.services.churnOnline();
    const change = h.events.find((e) => e.kind === 'online')!;
    expect(['add', 'delete']).toContain(change.op);
    expect(h.call('OnlineRequest').items.length).toBe(all.length + (change.op === 'add' ? 1 : -1));
  });
});

describe('backups and sync sessions', () => {
  it('lists backup files and reads accounts and orders from them', () => {
    const h = pf4Harness({ accounts: 30, trades: 20 });
    const files = h.call('BackupInfoUsers', { mode: 0 });
    expect(files).toHaveLength(1);
    records.PF4BackupInfo.parse(files[0]);
    h.call('UserRecordUpdate', { login: 100000, record: { name: 'Changed Later' } });
    const users = h.call('BackupRequestUsers', { file: files[0].file, limit: 3 });
    expect(users.map((u: { login: number }) => u.login)).toEqual([100000, 100001, 100002]);
    expect(users[0].name).not.toBe('Changed Later');
    expect(h.call('BackupRequestOrders', { file: files[0].file })).toHaveLength(20);
    expect(h.call('BackupInfoOrders', { mode: 1 })).toHaveLength(1);
    h.world.rollover(Date.now());
    expect(h.call('BackupInfoUsers', { mode: 0 })).toHaveLength(2);
  });

  it('restores accounts and orders, one result per order in input order', () => {
    const h = pf4Harness({ accounts: 5 });
    expect(
      h.call('BackupRestoreUsers', {
        records: [
          { login: 100001, balance: 777, name: 'Restored' },
          { login: 200000, group: 'demo\\forex', name: 'New' },
        ],
      }),
    ).toBe(true);
    expect(h.call('UserRecordRequest', { login: 100001 })).toMatchObject({ balance: 777, name: 'Restored' });
    expect(h.call('UserRecordRequest', { login: 200000 }).group).toBe('demo\\forex');
    const results = h.call('BackupRestoreOrders', {
      records: [
        { order: 9000001, login: 100001, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 10, openPrice: 1.08 },
        {
          order: 9000002,
          login: 100001,
          symbol: 'EURUSD',
          tradeCommand: 'Sell',
          volume: 10,
          openPrice: 1.08,
          closePrice: 1.07,
          profit: 100,
          closeTime: '2025-01-02T00:00:00Z',
        },
        { order: 9000001, login: 100001, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 10, openPrice: 1.08 },
        { order: 9000003, login: 4242, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 10 },
      ],
    });
    expect(results).toEqual([
      { order: 9000001, res: 1 },
      { order: 9000002, res: 1 },
      { order: 9000001, res: 0 },
      { order: 9000003, res: 0 },
    ]);
    expect(h.call('TradeRecordRequest', { order: 9000001 }).tradeRecordState).toBe('OpenRestored');
    expect(h.fails('BackupRestoreUsers', { records: [] }).code).toBe(R.InvalidData);
  });

  it('drains users and trades sync sessions changed since a timestamp', () => {
    const h = pf4Harness({ accounts: 10, trades: 5 });
    const since = Math.floor(Date.now() / 1000) - 1;
    h.call('UserRecordUpdate', { login: 100004, record: { comment: 'touched' } });
    h.call('UsersSyncStart', { timestamp: since });
    expect(h.call('UsersSyncRead').map((u: { login: number }) => u.login)).toEqual([100004]);
    expect(h.call('UsersSyncRead')).toEqual([]);
    h.call('UsersSyncStart', { timestamp: 0 });
    expect(h.call('UsersSyncRead', { limit: 4 })).toHaveLength(4);
    expect(h.call('UsersSyncRead', { limit: 100 })).toHaveLength(6);
    h.call('TradesSyncStart', { timestamp: 0 });
    expect(h.call('TradesSyncRead')).toHaveLength(5);
    expect(h.call('UsersSnapshot', { limit: 2 })).toHaveLength(2);
  });

  it('reads at most 100 000 accounts or trades at a time without a limit, the contract default, and at most 1 000 000 with one', () => {
    const h = pf4Harness({ accounts: 100_003, trades: 0 });
    const logins = h.world.users.keys();
    const snapshot = h.call('UsersSnapshot');
    expect(snapshot).toHaveLength(100_000);
    expect([snapshot[0].login, snapshot[99_999].login]).toEqual([logins[0], logins[99_999]]);
    h.call('UsersSyncStart', { timestamp: 0 });
    expect(h.call('UsersSyncRead')).toHaveLength(100_000);
    // The rest stays reserved for the next read.
    expect(h.call('UsersSyncRead').map((u: { login: number }) => u.login)).toEqual(logins.slice(100_000));
    expect(h.call('UsersSyncRead')).toEqual([]);
    for (const cmd of ['UsersSnapshot', 'UsersSyncRead', 'TradesSnapshot', 'TradesSyncRead']) {
      expect(h.fails(cmd, { limit: 1_000_001 }), cmd).toEqual({
        code: R.InvalidData,
        message: 'limit must be between 1 and 1000000',
      });
    }
  });

  it('needs the admin right to read a sync session or a snapshot, as to start one, and a refused read drains nothing', () => {
    const h = pf4Harness({ accounts: 10, trades: 5 });
    h.call('UsersSyncStart', { timestamp: 0 }, ['admin']);
    h.call('TradesSyncStart', { timestamp: 0 }, ['admin']);
    const desk = ['manager', 'seeTrades', 'trades', 'reports', 'userDetails'];
    for (const cmd of [
      'UsersSyncStart',
      'UsersSyncRead',
      'UsersSnapshot',
      'TradesSyncStart',
      'TradesSyncRead',
      'TradesSnapshot',
    ]) {
      expect(h.fails(cmd, { timestamp: 0, limit: 1 }, desk)).toEqual({
        code: R.NotEnoughRights,
        message: `${cmd} needs the admin right`,
      });
    }
    expect(h.call('UsersSyncRead', {}, ['admin'])).toHaveLength(10);
    expect(h.call('TradesSyncRead', {}, ['admin'])).toHaveLength(5);
    expect(h.call('UsersSnapshot', { limit: 3 }, ['admin'])).toHaveLength(3);
    expect(h.call('TradesSnapshot', { limit: 3 }, ['admin'])).toHaveLength(3);
  });

  it('answers licences, feeder logs and plugin commands', () => {
    const h = pf4Harness();
    expect(h.call('LicenseCheck', { licenseName: 'API' })).toBe(true);
    expect(h.call('LicenseCheck', { licenseName: 'Nope' })).toBe(false);
    expect(h.call('SrvFeederLog', { name: 'Main quotes' })).toContain('Main quotes');
    expect(h.call('ExternalCommandJSON', { payload: { ping: 1 } })).toEqual({ plugin: 'Echo', received: { ping: 1 } });
    expect(h.call('ExternalCommandBinary', { record: { data: 'AQEC' } })).toEqual({ data: 'AQI=' });
    expect(h.call('PluginsGet').map((p: { name: string }) => p.name)).toEqual(['Echo', 'Risk limits']);
  });
});
