/**
 * v2 PF4 Reports end to end: performance snapshots, closed-trade and daily reports, the daily-sync snapshot. Values
 * are checked against the simulator's own state, read with a manager session of the test's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { stackAndManagerForFile, type Client } from '../support.js';
import { ok, refuses } from './api.js';

type Row = Record<string, any>;
const DAY = 86_400_000;

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

/** Every login of the server. */
async function allLogins(): Promise<number[]> {
  const page = await sim.ok<{ items: Row[] }>('UsersRequest', {});
  return page.items.map((u) => u.login as number);
}

/** Logins whose history holds at least `min` closed trades (no balance or credit entries) in the window. */
async function tradersIn(from: string, to: string, min: number): Promise<number[]> {
  const found: number[] = [];
  for (const login of await allLogins()) {
    const history = await sim.ok<Row[]>('TradesUserHistory', { login, fromTime: from, toTime: to });
    if (history.filter(isClosedTrade).length >= min) found.push(login);
    if (found.length === 3) break;
  }
  return found;
}

const isClosedTrade = (r: Row) =>
  r.tradeCommand !== 'Balance' && r.tradeCommand !== 'Credit' && r.tradeRecordState !== 'Deleted';
const FROM = '2025-04-01T00:00:00Z';
const TO = '2025-06-01T00:00:00Z';

describe('v2.PF4.PerformanceRequest', () => {
  it('answers every snapshot ascending by ctm without from, and those at or after from with it', async () => {
    const all = await ok<Row[]>(c, 'v2.PF4.PerformanceRequest');
    const server = await sim.ok<Row[]>('PerformanceRequest', {});
    expect(all.length).toBeGreaterThanOrEqual(60);
    expect(all.length).toBeGreaterThanOrEqual(server.length - 1);
    const times = all.map((p) => Date.parse(p.ctm));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The seeded snapshots as the server holds them, field for field.
    expect(all.slice(0, 60)).toEqual(server.slice(0, 60));

    const from = all[40].ctm as string;
    const later = await ok<Row[]>(c, 'v2.PF4.PerformanceRequest', { query: { from } });
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((p) => Date.parse(p.ctm) >= Date.parse(from))).toBe(true);
    expect(later.slice(0, 20)).toEqual(all.slice(40, 60));
  });

  it('answers an empty list when nothing is that recent', async () => {
    expect(await ok<Row[]>(c, 'v2.PF4.PerformanceRequest', { query: { from: '2038-01-01T00:00:00Z' } })).toEqual([]);
  });

  it('refuses a from outside 1970..2038 and one that is not a date-time, naming from', async () => {
    await refuses(c, 'v2.PF4.PerformanceRequest', 'from', { query: { from: '1969-12-31T23:59:59Z' } });
    const late = await refuses(c, 'v2.PF4.PerformanceRequest', 'from', { query: { from: '2038-01-19T03:14:08Z' } });
    expect(late).toMatch(/out of range/);
    await refuses(c, 'v2.PF4.PerformanceRequest', 'from', { query: { from: 'yesterday' } });
  });
});

describe('v2.PF4.ReportsRequest', () => {
  it('flattens the closed trades of the accounts in the window, leaving out balance entries and unknown logins', async () => {
    const logins = await tradersIn(FROM, TO, 2);
    expect(logins.length).toBeGreaterThanOrEqual(2);
    const report = await ok<Row[]>(c, 'v2.PF4.ReportsRequest', {
      query: { from: FROM, to: TO, logins: [...logins, 99_999_999] },
    });
    const expected: Row[] = [];
    for (const login of logins)
      expected.push(
        ...(await sim.ok<Row[]>('TradesUserHistory', { login, fromTime: FROM, toTime: TO })).filter(isClosedTrade),
      );
    expect(report.map((t) => t.order).sort()).toEqual(expected.map((t) => t.order).sort());
    expect(report.every((t) => t.tradeCommand === 'Buy' || t.tradeCommand === 'Sell')).toBe(true);
    expect(new Set(report.map((t) => t.login))).toEqual(new Set(logins));
    const one = expected[0];
    expect(report.find((t) => t.order === one.order)).toMatchObject({
      login: one.login,
      symbol: one.symbol,
      profit: one.profit,
      closeTime: one.closeTime,
    });
  });

  it('takes a template name up to 32 characters (RTL_report by default) and answers [] for a window without trades', async () => {
    const [login] = await allLogins();
    const named = await ok<Row[]>(c, 'v2.PF4.ReportsRequest', {
      query: { from: '2030-01-01T00:00:00Z', to: '2030-02-01T00:00:00Z', logins: [login], name: 'x'.repeat(32) },
    });
    expect(named).toEqual([]);
  });

  it('refuses missing or bad inputs, naming the field', async () => {
    const [login] = await allLogins();
    await refuses(c, 'v2.PF4.ReportsRequest', 'from', { query: { to: TO, logins: [login] } });
    await refuses(c, 'v2.PF4.ReportsRequest', 'to', { query: { from: FROM, logins: [login] } });
    await refuses(c, 'v2.PF4.ReportsRequest', 'logins', { query: { from: FROM, to: TO } });
    await refuses(c, 'v2.PF4.ReportsRequest', 'logins', { query: { from: FROM, to: TO, logins: ['abc'] } });
    await refuses(c, 'v2.PF4.ReportsRequest', 'name', {
      query: { from: FROM, to: TO, logins: [login], name: 'x'.repeat(33) },
    });
    await refuses(c, 'v2.PF4.ReportsRequest', 'to', { query: { from: TO, to: FROM, logins: [login] } });
  });
});

describe('v2.PF4.DailyReportsRequest', () => {
  it("answers one row per account and day, whose balance the account's history explains", async () => {
    const [a, b] = await tradersIn(FROM, TO, 1);
    const from = '2025-05-01T00:00:00Z';
    const to = '2025-05-31T00:00:00Z';
    const rows = await ok<Row[]>(c, 'v2.PF4.DailyReportsRequest', { query: { from, to, logins: [a, b, 99_999_999] } });
    expect(rows).toHaveLength(62);
    for (const login of [a, b]) {
      const own = rows.filter((r) => r.login === login);
      expect(own.map((r) => r.ctm)).toEqual(
        Array.from({ length: 31 }, (_, i) => new Date(Date.parse(from) + i * DAY).toISOString()),
      );
      const user = await sim.ok<Row>('UserRecordRequest', { login });
      expect(own.every((r) => r.group === user.group)).toBe(true);
      // The balance at the end of each day is what the history closed before the next day adds up to.
      const history = await sim.ok<Row[]>('TradesUserHistory', { login });
      for (const row of [own[0], own[15], own[30]]) {
        const end = Date.parse(row.ctm) + DAY;
        const sum = history
          .filter(
            (r) =>
              r.tradeCommand !== 'Credit' &&
              r.tradeRecordState !== 'Deleted' &&
              Date.parse(r.closeTime ?? r.openTime) < end,
          )
          .reduce((s, r) => s + r.profit + r.commission + r.storage + r.taxes, 0);
        expect(row.balance).toBeCloseTo(sum, 2);
      }
      for (let i = 1; i < own.length; i++) expect(own[i].balancePrev).toBeCloseTo(own[i - 1].balance, 2);
    }
  });

  it('takes a template name up to 31 characters and refuses a longer one, naming name', async () => {
    const [login] = await allLogins();
    const rows = await ok<Row[]>(c, 'v2.PF4.DailyReportsRequest', {
      query: { from: '2025-05-01T00:00:00Z', to: '2025-05-02T00:00:00Z', logins: [login], name: 'x'.repeat(31) },
    });
    expect(rows.map((r) => r.login)).toEqual([login, login]);
    await refuses(c, 'v2.PF4.DailyReportsRequest', 'name', {
      query: { from: FROM, to: TO, logins: [login], name: 'x'.repeat(32) },
    });
    await refuses(c, 'v2.PF4.DailyReportsRequest', 'logins', { query: { from: FROM, to: TO } });
    await refuses(c, 'v2.PF4.DailyReportsRequest', 'to', { query: { from: FROM, logins: [login] } });
  });
});

describe('v2.PF4.DailyReportsRequestEx', () => {
  it("keys the rows by the logins asked (as strings), each account's rows in chronological order", async () => {
    const [a, b] = await tradersIn(FROM, TO, 1);
    const query = { from: '2025-05-10T00:00:00Z', to: '2025-05-20T00:00:00Z', logins: [b, a, 99_999_999] };
    const byLogin = await ok<Record<string, Row[]>>(c, 'v2.PF4.DailyReportsRequestEx', { query });
    expect(Object.keys(byLogin).sort()).toEqual([String(a), String(b)].sort());
    const flat = await ok<Row[]>(c, 'v2.PF4.DailyReportsRequest', { query });
    for (const login of [a, b]) {
      const rows = byLogin[String(login)];
      expect(rows).toHaveLength(11);
      expect(rows.every((r) => r.login === login)).toBe(true);
      const times = rows.map((r) => Date.parse(r.ctm));
      expect(times).toEqual([...times].sort((x, y) => x - y));
      expect(new Set(times).size).toBe(times.length);
      expect(rows).toEqual(flat.filter((r) => r.login === login).sort((x, y) => Date.parse(x.ctm) - Date.parse(y.ctm)));
    }
  });

  it('refuses a template name over 31 characters and an empty login list, naming the field', async () => {
    await refuses(c, 'v2.PF4.DailyReportsRequestEx', 'name', {
      query: { from: FROM, to: TO, logins: [100000], name: 'y'.repeat(32) },
    });
    await refuses(c, 'v2.PF4.DailyReportsRequestEx', 'logins', { query: { from: FROM, to: TO } });
  });
});

describe('v2.PF4.DailySyncStart and v2.PF4.DailySyncRead', () => {
  it('reads nothing without a start', async () => {
    expect(await ok<Row[]>(c, 'v2.PF4.DailySyncRead')).toEqual([]);
  });

  it("reserves every account's row of the last completed day, drains it in one read, then answers []", async () => {
    expect(await ok<boolean>(c, 'v2.PF4.DailySyncStart', { query: { timestamp: 0 } })).toBe(true);
    const rows = await ok<Row[]>(c, 'v2.PF4.DailySyncRead');
    const logins = await allLogins();
    expect(rows.map((r) => r.login).sort()).toEqual([...logins].sort());
    const yesterday = new Date(Math.floor(Date.now() / DAY) * DAY - DAY).toISOString();
    expect(new Set(rows.map((r) => r.ctm))).toEqual(new Set([yesterday]));
    // The row of one account is the daily report of that day.
    const [daily] = await ok<Row[]>(c, 'v2.PF4.DailyReportsRequest', {
      query: { from: yesterday, to: yesterday, logins: [rows[0].login] },
    });
    expect(rows[0]).toEqual(daily);
    expect(await ok<Row[]>(c, 'v2.PF4.DailySyncRead')).toEqual([]);
  });

  it('reserves nothing from a timestamp after the last completed day', async () => {
    expect(await ok<boolean>(c, 'v2.PF4.DailySyncStart', { query: { timestamp: 2_147_483_647 } })).toBe(true);
    expect(await ok<Row[]>(c, 'v2.PF4.DailySyncRead')).toEqual([]);
  });

  it('refuses a timestamp that is missing or outside 32-bit Unix seconds, naming timestamp', async () => {
    await refuses(c, 'v2.PF4.DailySyncStart', 'timestamp', {});
    await refuses(c, 'v2.PF4.DailySyncStart', 'timestamp', { query: { timestamp: -1 } });
    await refuses(c, 'v2.PF4.DailySyncStart', 'timestamp', { query: { timestamp: 2_147_483_648 } });
    await refuses(c, 'v2.PF4.DailySyncStart', 'timestamp', { query: { timestamp: '1.5' } });
  });
});
