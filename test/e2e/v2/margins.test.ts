/** v2 PF4 History, Margins and Online end to end: each operation's rule checked against the simulator's state. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackAndManagerForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

type Trade = Record<string, any> & { order: number; login: number; tradeCommand: string };
type Margin = {
  login: number;
  group: string;
  leverage: number;
  balance: number;
  equity: number;
  volume: number;
  margin: number;
  free: number;
  level: number;
  controllingType: string;
  levelType: string;
  updated: number;
};
type Online = { login: number; group: string };

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

const GROUP = 'demo\\forex';
const tx = (body: Record<string, unknown>) =>
  ok<Record<string, any> & { order: number; price: number }>(c, 'v2.PF4.TradeTransaction', { body });

async function newAccount(name: string, deposit: number): Promise<number> {
  const user = await ok<{ login: number }>(c, 'v2.PF4.UserRecordNew', { body: { login: 0, group: GROUP, name } });
  if (deposit)
    await tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: user.login, price: deposit });
  return user.login;
}

async function buy(login: number, symbol = 'EURUSD', volume = 10) {
  return tx({ tradeTransactionType: 'BrOrderOpen', tradeCommand: 'Buy', orderBy: login, symbol, volume });
}

/** Waits until this machine's clock (the trading server's too) is in the next whole second. */
async function nextSecond(): Promise<void> {
  const next = (Math.floor(Date.now() / 1000) + 1) * 1000;
  expect(await eventually(() => Promise.resolve(Date.now() >= next), 2000, 10)).toBe(true);
}

/** The fields of a margin level that only trade and balance operations move (equity, free and level float with quotes). */
const fixed = (m: Margin) => ({
  login: m.login,
  group: m.group,
  leverage: m.leverage,
  balance: m.balance,
  volume: m.volume,
  margin: m.margin,
  controllingType: m.controllingType,
});

describe('v2.PF4.TradesUserHistory', () => {
  let login: number;
  let deposit: number;
  let closed: number;
  let between: string;

  beforeAll(async () => {
    login = await newAccount('History', 0);
    deposit = (await tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: 20_000 }))
      .order;
    // History times are whole seconds: `between` in a second after the deposit's, the trades in a later one.
    await nextSecond();
    between = new Date().toISOString();
    await nextSecond();
    const open = await buy(login);
    closed = (await tx({ tradeTransactionType: 'BrOrderClose', order: open.order })).order;
    await tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: login, price: 500 });
  });

  it("answers the account's closed trades and balance and credit entries, oldest first, as the server holds them", async () => {
    const answer = await call<Trade[]>(c, 'v2.PF4.TradesUserHistory', { params: { login } });
    expect(answer.headers.get('x-request-timeout-applied'), 'history class').toBe('30');
    const rows = answer.body.data!;
    const server = await sim.ok<Trade[]>('TradesUserHistory', { login });
    expect(rows.map((t) => [t.order, t.tradeCommand])).toEqual(server.map((t) => [t.order, t.tradeCommand]));
    expect(rows.map((t) => t.tradeCommand)).toEqual(['Balance', 'Buy', 'Credit']);
    expect(rows[0]).toMatchObject({ order: deposit, profit: 20_000, tradeRecordState: 'ClosedNormal' });
    expect(rows[1]).toMatchObject({
      order: closed,
      login,
      tradeRecordState: 'ClosedNormal',
      closePrice: server[1].closePrice,
      profit: server[1].profit,
    });
    const times = rows.map((t) => Date.parse(t.closeTime));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('keeps to the fromTime..toTime window', async () => {
    const after = await ok<Trade[]>(c, 'v2.PF4.TradesUserHistory', { params: { login }, query: { fromTime: between } });
    expect(after.map((t) => t.tradeCommand)).toEqual(['Buy', 'Credit']);
    const before = await ok<Trade[]>(c, 'v2.PF4.TradesUserHistory', {
      params: { login },
      query: { fromTime: '2000-01-01T00:00:00Z', toTime: between },
    });
    expect(before.map((t) => t.order)).toEqual([deposit]);
    // A time without an offset is UTC.
    const local = await ok<Trade[]>(c, 'v2.PF4.TradesUserHistory', {
      params: { login },
      query: { fromTime: between.replace(/Z$/, '') },
    });
    expect(local.map((t) => t.order)).toEqual(after.map((t) => t.order));
    expect(
      await ok(c, 'v2.PF4.TradesUserHistory', { params: { login }, query: { toTime: '2001-01-01T00:00:00Z' } }),
    ).toEqual([]);
  });

  it('answers NotFound for an unknown login and refuses bad input naming the field', async () => {
    expect(await fails(c, 'v2.PF4.TradesUserHistory', { params: { login: 2_000_000_000 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.TradesUserHistory', 'fromTime', { params: { login }, query: { fromTime: 'yesterday' } });
    await refuses(c, 'v2.PF4.TradesUserHistory', 'toTime', {
      params: { login },
      query: { fromTime: '2024-02-01T00:00:00Z', toTime: '2024-01-01T00:00:00Z' },
    });
    await refuses(c, 'v2.PF4.TradesUserHistory', 'login', { params: { login: 0 } });
  });
});

describe('v2.PF4.MarginLevelRequest', () => {
  it("answers the account's margin level now, as the server computes it; NotFound for an unknown login", async () => {
    const login = await newAccount('Margin live', 40_000);
    await buy(login, 'EURUSD', 30);
    const live = await ok<Margin>(c, 'v2.PF4.MarginLevelRequest', { params: { login } });
    const server = await sim.ok<Margin>('MarginLevelRequest', { login });
    expect(fixed(live)).toEqual(fixed(server));
    expect(live).toMatchObject({ login, group: GROUP, balance: 40_000, volume: 30 });
    expect(live.margin).toBeGreaterThan(0);
    expect(live.free).toBeCloseTo(live.equity - live.margin, 1);
    // An account without trades has a level too when read live: nothing used, everything free.
    const idle = await newAccount('Margin idle', 1000);
    expect(await ok<Margin>(c, 'v2.PF4.MarginLevelRequest', { params: { login: idle } })).toMatchObject({
      login: idle,
      margin: 0,
      volume: 0,
      equity: 1000,
      free: 1000,
    });
    expect(await fails(c, 'v2.PF4.MarginLevelRequest', { params: { login: 2_000_000_000 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.MarginLevelRequest', 'login', { params: { login: 'abc' } });
  });
});

describe('v2.PF4.MarginLevelGet', () => {
  it('answers the cached level of an account with trades, equal to the live one; it follows a new trade', async () => {
    const login = await newAccount('Margin cached', 60_000);
    await buy(login, 'EURUSD', 10);
    const first = await eventually(
      async () => {
        const r = await call<Margin>(c, 'v2.PF4.MarginLevelGet', { params: { login } });
        return r.body.data && r.body.data.volume === 10 ? r.body.data : null;
      },
      5000,
      20,
    );
    expect(first).not.toBeNull();
    expect(fixed(first!)).toEqual(fixed(await ok<Margin>(c, 'v2.PF4.MarginLevelRequest', { params: { login } })));
    await buy(login, 'GBPUSD', 20);
    const second = await eventually(
      async () => {
        const r = await call<Margin>(c, 'v2.PF4.MarginLevelGet', { params: { login } });
        return r.body.data && r.body.data.volume === 30 ? r.body.data : null;
      },
      5000,
      20,
    );
    expect(second).not.toBeNull();
    expect(fixed(second!)).toEqual(fixed(await sim.ok<Margin>('MarginLevelRequest', { login })));
    expect(second!.margin).toBeGreaterThan(first!.margin);
  });

  it('answers NotFound for an account without open trades, and for one whose last trade closed', async () => {
    const login = await newAccount('Margin none', 5000);
    await eventually(
      async () => (await call(c, 'v2.PF4.UserRecordGet', { params: { login } })).body.error === null,
      5000,
      20,
    );
    expect(await fails(c, 'v2.PF4.MarginLevelGet', { params: { login } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    const open = await buy(login);
    await eventually(
      async () => (await call(c, 'v2.PF4.MarginLevelGet', { params: { login } })).body.error === null,
      5000,
      20,
    );
    await tx({ tradeTransactionType: 'BrOrderClose', order: open.order });
    const gone = await eventually(
      async () => (await call(c, 'v2.PF4.MarginLevelGet', { params: { login } })).body.error?.code === 'NotFound',
      5000,
      20,
    );
    expect(gone).toBe(true);
    await refuses(c, 'v2.PF4.MarginLevelGet', 'login', { params: { login: 0 } });
  });
});

describe('v2.PF4.MarginsGet', () => {
  it('answers the cached levels of exactly the accounts with open trades or orders, by login, as the server has them', async () => {
    const login = await newAccount('Margins list', 30_000);
    await buy(login, 'EURUSD', 10);
    let rows: Margin[] = [];
    const same = await eventually(
      async () => {
        rows = await ok<Margin[]>(c, 'v2.PF4.MarginsGet');
        const server = await sim.ok<Margin[]>('MarginsRequest');
        return (
          JSON.stringify(rows.map((m) => m.login)) === JSON.stringify(server.map((m) => m.login)) &&
          rows.some((m) => m.login === login)
        );
      },
      5000,
      50,
    );
    expect(same).toBe(true);
    const logins = rows.map((m) => m.login);
    expect(logins).toEqual([...logins].sort((a, b) => a - b));
    const mine = rows.find((m) => m.login === login)!;
    expect(fixed(mine)).toEqual(fixed(await sim.ok<Margin>('MarginLevelRequest', { login })));
    const idle = await newAccount('Margins idle', 1000);
    await eventually(
      async () => (await call(c, 'v2.PF4.UserRecordGet', { params: { login: idle } })).body.error === null,
      5000,
      20,
    );
    expect((await ok<Margin[]>(c, 'v2.PF4.MarginsGet')).some((m) => m.login === idle)).toBe(false);
  });
});

describe('v2.PF4.OnlineRequest', () => {
  it("pages the accounts online now by login, live; the pages make up the server's list", async () => {
    let last = '';
    const same = await eventually(
      async () => {
        const { items } = await allPages<Online>(c, 'v2.PF4.OnlineRequest', 3);
        const server = await sim.ok<{ items: Online[] }>('OnlineRequest', {});
        last = JSON.stringify([items, server.items]);
        return items.length > 3 && JSON.stringify(items) === JSON.stringify(server.items);
      },
      10_000,
      100,
    );
    expect(same, last).toBe(true);
    const whole = await ok<Online[]>(c, 'v2.PF4.OnlineRequest');
    const users = await sim.ok<Array<{ login: number; group: string }>>('UserRecordsRequest', {
      logins: whole.map((o) => o.login),
    });
    const groupOf = new Map(users.map((u) => [u.login, u.group]));
    expect(whole.every((o) => groupOf.get(o.login) === o.group)).toBe(true);
    await refusesTamperedCursor(c, 'v2.PF4.OnlineRequest');
    await refuses(c, 'v2.PF4.OnlineRequest', 'limit', { query: { limit: 5001 } });
  });
});

describe('v2.PF4.OnlineGet', () => {
  it("pages the cached online accounts by login; they follow the server within the cache's lag", async () => {
    let last = '';
    const same = await eventually(
      async () => {
        const { items } = await allPages<Online>(c, 'v2.PF4.OnlineGet', 4);
        const whole = await ok<Online[]>(c, 'v2.PF4.OnlineGet');
        const server = await sim.ok<{ items: Online[] }>('OnlineRequest', {});
        last = JSON.stringify([items, whole, server.items]);
        return (
          items.length > 4 &&
          JSON.stringify(items) === JSON.stringify(whole) &&
          JSON.stringify(whole) === JSON.stringify(server.items)
        );
      },
      10_000,
      100,
    );
    expect(same, last).toBe(true);
    await refusesTamperedCursor(c, 'v2.PF4.OnlineGet');
    await refuses(c, 'v2.PF4.OnlineGet', 'limit', { query: { limit: 0 } });
  });

  it('follows the accounts logging in and out: a churned login appears or leaves in the cache', async () => {
    const before = new Set((await ok<Online[]>(c, 'v2.PF4.OnlineGet')).map((o) => o.login));
    const changed = await eventually(
      async () => {
        const now = new Set((await ok<Online[]>(c, 'v2.PF4.OnlineGet')).map((o) => o.login));
        return [...now].some((l) => !before.has(l)) || [...before].some((l) => !now.has(l));
      },
      8000,
      200,
    );
    expect(changed).toBe(true);
  });
});
