/** v2 PF4 Trades end to end: each operation's own rule, values checked against the simulator's state. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackAndManagerForFile, type Client } from '../support.js';
import { DEMO_PF4_SERVER } from '../../../launcher/demo.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

type Trade = Record<string, any> & { order: number; login: number; symbol: string; tradeCommand: string };
type Tx = Record<string, any> & { order: number; orderBy: number; price: number };

let c: Client;
/** A manager session of the test's own on the simulator, to read the trading server's state directly. */
let sim: ManagerClient;
// One link object per platform, so one replica answers every cached read of this file and a read never sees older
// data than the one before it (across link objects only X-Gateway-Position promises that: docs/api.md).
const setup = stackAndManagerForFile(DEMO_PF4_SERVER, { edgeVars: { LINKS_PER_PLATFORM: '1' } });
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

const SYMBOL = 'EURUSD';
const GROUP = 'demo\\forex';
const tx = (body: Record<string, unknown>) => ok<Tx>(c, 'v2.PF4.TradeTransaction', { body });
const quote = () => sim.ok<{ bid: number; ask: number }>('TickInfoLast', { symbol: SYMBOL });
const round5 = (v: number) => Number(v.toFixed(5));

/** A fresh account of this file's own, funded by a balance transaction, so no other test's trades mix with its. */
async function newAccount(name: string, deposit = 100_000, group = GROUP): Promise<number> {
  const user = await ok<{ login: number }>(c, 'v2.PF4.UserRecordNew', { body: { login: 0, group, name } });
  if (deposit)
    await tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: user.login, price: deposit });
  return user.login;
}

/** Opens a market Buy with far stops; answers the executed transaction. */
async function buy(login: number, volume = 10): Promise<Tx> {
  const q = await quote();
  return tx({
    tradeTransactionType: 'BrOrderOpen',
    tradeCommand: 'Buy',
    orderBy: login,
    symbol: SYMBOL,
    volume,
    sl: round5(q.bid - 0.05),
    tp: round5(q.ask + 0.05),
  });
}

/** Places a BuyLimit far below the market (it will not fill during the test). */
async function buyLimit(login: number): Promise<Tx> {
  const q = await quote();
  return tx({
    tradeTransactionType: 'BrOrderOpen',
    tradeCommand: 'BuyLimit',
    orderBy: login,
    symbol: SYMBOL,
    volume: 10,
    price: round5(q.ask * 0.8),
  });
}

/** Polls a cached read until `accept` holds for its data. */
async function cachedUntil<T>(
  id: string,
  options: Parameters<typeof call>[2],
  accept: (data: T | null, error: unknown) => boolean,
): Promise<T | null> {
  let last: T | null = null;
  const done = await eventually(
    async () => {
      const r = await call<T>(c, id, options);
      last = r.body.data;
      return accept(r.body.data, r.body.error);
    },
    5000,
    20,
  );
  expect(done, `${id} never reached the expected state: ${JSON.stringify(last)?.slice(0, 300)}`).toBe(true);
  return last;
}

describe('v2.PF4.TradesGet', () => {
  it('pages every open trade by ascending ticket, every contract field present, as the server holds them', async () => {
    const { items, pages } = await allPages<Record<string, unknown>>(c, 'v2.PF4.TradesGet', 97);
    const orders = items.map((t) => t.order as number);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    expect(new Set(orders).size).toBe(orders.length);
    expect(pages).toBe(Math.ceil(orders.length / 97));
    expect(items[0]).toHaveProperty('closeTime');
    expect(items[0]).toHaveProperty('expiration');
    const whole = await ok<Array<{ order: number }>>(c, 'v2.PF4.TradesGet');
    expect(whole.map((t) => t.order)).toEqual(orders);
    const same = await eventually(async () => {
      const server = await sim.ok<{ items: Trade[] }>('TradesRequest', {});
      const cached = await ok<Array<{ order: number }>>(c, 'v2.PF4.TradesGet');
      return JSON.stringify(cached.map((t) => t.order)) === JSON.stringify(server.items.map((t) => t.order));
    }, 5000);
    expect(same).toBe(true);
  });

  it('refuses a tampered cursor and a limit out of range, naming the field', async () => {
    await refusesTamperedCursor(c, 'v2.PF4.TradesGet');
    // Well formed, but text where the list is keyed by ticket: not a place in this list.
    await refuses(c, 'v2.PF4.TradesGet', 'cursor', {
      query: { limit: 2, cursor: Buffer.from('"zzz"').toString('base64url') },
    });
    await refuses(c, 'v2.PF4.TradesGet', 'limit', { query: { limit: 5001 } });
  });
});

describe('v2.PF4.TradesGetTicket', () => {
  it('answers an open trade from the cache and NotFound with the manager code for another ticket', async () => {
    const [first] = await ok<Array<{ order: number; login: number }>>(c, 'v2.PF4.TradesGet', { query: { limit: 1 } });
    const trade = await ok(c, 'v2.PF4.TradesGetTicket', { params: { ticket: first.order } });
    expect(trade).toMatchObject({ order: first.order, login: first.login });
    const missing = await fails(c, 'v2.PF4.TradesGetTicket', { params: { ticket: 1 } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.TradesGetTicket', 'ticket', { params: { ticket: 'x' } });
  });
});

describe("a trade's life through v2.PF4.TradeTransaction and the cached reads", () => {
  let login: number;
  let market: Tx;
  let pending: Tx;

  it('funds a new account with a BrBalance transaction: the answer is the executed deposit', async () => {
    const user = await ok<{ login: number; balance: number }>(c, 'v2.PF4.UserRecordNew', {
      body: { login: 0, group: GROUP, name: 'Trades life' },
    });
    login = user.login;
    const deposit = await tx({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 50_000,
      comment: 'first deposit',
    });
    expect(deposit).toMatchObject({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 50_000,
      comment: 'first deposit',
    });
    expect(deposit.order).toBeGreaterThan(0);
    const account = await sim.ok<{ balance: number }>('UserRecordRequest', { login });
    expect(account.balance).toBe(50_000);
    const history = await sim.ok<Trade[]>('TradesUserHistory', { login });
    expect(history.map((h) => [h.order, h.tradeCommand, h.profit])).toEqual([[deposit.order, 'Balance', 50_000]]);
  });

  it('opens a market Buy: the answer carries the new ticket and the fill price, and the server holds the trade', async () => {
    const q = await quote();
    const sl = round5(q.bid - 0.05);
    const tp = round5(q.ask + 0.05);
    market = await tx({
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: SYMBOL,
      volume: 20,
      sl,
      tp,
      comment: 'life',
    });
    const server = await sim.ok<Trade>('TradeRecordRequest', { order: market.order });
    expect(market).toMatchObject({
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: SYMBOL,
      volume: 20,
      sl,
      tp,
      price: server.openPrice,
      comment: 'life',
    });
    expect(server).toMatchObject({ login, symbol: SYMBOL, tradeCommand: 'Buy', volume: 20, sl, tp });
  });

  it('places a pending BuyLimit: the answer has its open price', async () => {
    pending = await buyLimit(login);
    const server = await sim.ok<Trade>('TradeRecordRequest', { order: pending.order });
    expect(server).toMatchObject({ login, tradeCommand: 'BuyLimit', openPrice: pending.price });
  });

  it("v2.PF4.TradesGetTicket and v2.PF4.TradeRecordGet see both within the cache's lag", async () => {
    for (const t of [market, pending]) {
      const row = await cachedUntil<Trade>(
        'v2.PF4.TradesGetTicket',
        { params: { ticket: t.order } },
        (d) => d !== null,
      );
      expect(row).toMatchObject({ order: t.order, login, openPrice: t.price, tradeRecordState: 'OpenNormal' });
      const record = await ok<Trade>(c, 'v2.PF4.TradeRecordGet', { params: { order: t.order } });
      expect(record).toMatchObject({ order: t.order, login, openPrice: t.price });
    }
  });

  it("v2.PF4.TradesGetByLogin answers exactly the account's open trades, when the group is the account's", async () => {
    const rows = await cachedUntil<Trade[]>(
      'v2.PF4.TradesGetByLogin',
      { params: { login, group: GROUP } },
      (d) => d?.length === 2,
    );
    expect(rows!.map((t) => t.order)).toEqual([market.order, pending.order].sort((a, b) => a - b));
    const server = await sim.ok<Trade[]>('TradesUserRequest', { login });
    expect(rows!.map((t) => t.order)).toEqual(server.map((t) => t.order));
    // Another group than the account's: the (login, group) pair names no account.
    const other = await fails(c, 'v2.PF4.TradesGetByLogin', { params: { login, group: 'demo\\pro' } });
    expect(other).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect(other.message).toContain('not in group');
    // Group names are case-sensitive.
    expect((await fails(c, 'v2.PF4.TradesGetByLogin', { params: { login, group: 'DEMO\\forex' } })).code).toBe(
      'NotFound',
    );
    expect((await fails(c, 'v2.PF4.TradesGetByLogin', { params: { login: 2_000_000_000, group: GROUP } })).code).toBe(
      'NotFound',
    );
  });

  it('v2.PF4.TradesGetByLogin answers an empty list for an account without trades', async () => {
    const empty = await newAccount('No trades');
    const rows = await cachedUntil<Trade[]>(
      'v2.PF4.TradesGetByLogin',
      { params: { login: empty, group: GROUP } },
      (d) => Array.isArray(d),
    );
    expect(rows).toEqual([]);
    await refuses(c, 'v2.PF4.TradesGetByLogin', 'group', { params: { login: empty, group: 'g'.repeat(17) } });
    await refuses(c, 'v2.PF4.TradesGetByLogin', 'login', { params: { login: 0, group: GROUP } });
  });

  it("v2.PF4.TradesGetBySymbol answers the symbol's open trades and pending orders, as the server holds them", async () => {
    const rows = await cachedUntil<Trade[]>(
      'v2.PF4.TradesGetBySymbol',
      { query: { symbol: SYMBOL } },
      (d) => !!d && d.some((t) => t.order === market.order) && d.some((t) => t.order === pending.order),
    );
    expect(rows!.every((t) => t.symbol === SYMBOL)).toBe(true);
    const orders = rows!.map((t) => t.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    const same = await eventually(async () => {
      const server = (await sim.ok<{ items: Trade[] }>('TradesRequest', {})).items
        .filter((t) => t.symbol === SYMBOL)
        .map((t) => t.order);
      const cached = (await ok<Trade[]>(c, 'v2.PF4.TradesGetBySymbol', { query: { symbol: SYMBOL } })).map(
        (t) => t.order,
      );
      return JSON.stringify(server) === JSON.stringify(cached);
    }, 5000);
    expect(same).toBe(true);
    expect(await ok(c, 'v2.PF4.TradesGetBySymbol', { query: { symbol: 'NOSUCH' } })).toEqual([]);
    await refuses(c, 'v2.PF4.TradesGetBySymbol', 'symbol');
    await refuses(c, 'v2.PF4.TradesGetBySymbol', 'symbol', { query: { symbol: 'S'.repeat(13) } });
  });

  it('v2.PF4.TradesGetByMarket answers the open market trades of every account and leaves pending orders out', async () => {
    const rows = await cachedUntil<Trade[]>(
      'v2.PF4.TradesGetByMarket',
      {},
      (d) => !!d && d.some((t) => t.order === market.order),
    );
    expect(rows!.some((t) => t.order === pending.order)).toBe(false);
    expect(new Set(rows!.map((t) => t.tradeCommand))).toEqual(new Set(['Buy', 'Sell']));
    const same = await eventually(async () => {
      const server = (await sim.ok<{ items: Trade[] }>('TradesRequest', {})).items
        .filter((t) => t.tradeCommand === 'Buy' || t.tradeCommand === 'Sell')
        .map((t) => t.order);
      const cached = (await ok<Trade[]>(c, 'v2.PF4.TradesGetByMarket')).map((t) => t.order);
      return JSON.stringify(server) === JSON.stringify(cached);
    }, 5000);
    expect(same).toBe(true);
  });

  it("modifies the Buy's stops with BrOrderModify: the answer and, within the lag, the cache have them", async () => {
    const q = await quote();
    const sl = round5(q.bid - 0.04);
    const tp = round5(q.ask + 0.04);
    const done = await tx({ tradeTransactionType: 'BrOrderModify', order: market.order, sl, tp });
    expect(done).toMatchObject({
      tradeTransactionType: 'BrOrderModify',
      order: market.order,
      orderBy: login,
      tradeCommand: 'Buy',
      sl,
      tp,
      price: market.price,
    });
    expect(await sim.ok<Trade>('TradeRecordRequest', { order: market.order })).toMatchObject({ sl, tp });
    await cachedUntil<Trade>(
      'v2.PF4.TradeRecordGet',
      { params: { order: market.order } },
      (d) => d?.sl === sl && d?.tp === tp,
    );
  });

  it("refuses a transaction without what its type needs, naming the field, and passes the server's refusals on", async () => {
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.tradeTransactionType', {
      body: { tradeTransactionType: 'Teleport', order: market.order },
    });
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.order', { body: { tradeTransactionType: 'BrOrderClose' } });
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.symbol', {
      body: { tradeTransactionType: 'BrOrderOpen', tradeCommand: 'Buy', orderBy: login, volume: 10 },
    });
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.price', {
      body: {
        tradeTransactionType: 'BrOrderOpen',
        tradeCommand: 'SellStop',
        orderBy: login,
        symbol: SYMBOL,
        volume: 10,
      },
    });
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.tradeCommand', {
      body: { tradeTransactionType: 'BrBalance', tradeCommand: 'Buy', orderBy: login, price: 5 },
    });
    await refuses(c, 'v2.PF4.TradeTransaction', 'body.comment', {
      body: { tradeTransactionType: 'BrOrderModify', order: market.order, comment: 'c'.repeat(32) },
    });
    await refuses(c, 'v2.PF4.TradeTransaction', 'bogus', {
      body: { tradeTransactionType: 'BrOrderModify', order: market.order, bogus: 1 },
    });
    // The trading engine's own rules come back with its result code: a volume off the group's limits, a pending close.
    const volume = await fails(c, 'v2.PF4.TradeTransaction', {
      body: {
        tradeTransactionType: 'BrOrderOpen',
        tradeCommand: 'Buy',
        orderBy: login,
        symbol: SYMBOL,
        volume: 10_001,
      },
    });
    expect(volume).toMatchObject({ code: 'PF4Error', managerCode: 'TradeBadVolume' });
    const closePending = await fails(c, 'v2.PF4.TradeTransaction', {
      body: { tradeTransactionType: 'BrOrderClose', order: pending.order },
    });
    expect(closePending).toMatchObject({ code: 'PF4Error', managerCode: 'TradeBadPrices' });
    const money = await fails(c, 'v2.PF4.TradeTransaction', {
      body: { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: -10_000_000 },
    });
    expect(money).toMatchObject({ code: 'PF4Error', managerCode: 'TradeNoMoney' });
    expect((await sim.ok<{ balance: number }>('UserRecordRequest', { login })).balance).toBe(50_000);
  });

  it('closes the Buy: the answer has the close price; the trade leaves the open trades and v2.PF4.TradeRecordGet finds it closed', async () => {
    const closed = await tx({ tradeTransactionType: 'BrOrderClose', order: market.order });
    const history = await sim.ok<Trade[]>('TradesUserHistory', { login });
    const record = history.find((h) => h.order === market.order)!;
    expect(record).toMatchObject({ tradeRecordState: 'ClosedNormal' });
    expect(closed).toMatchObject({
      tradeTransactionType: 'BrOrderClose',
      order: market.order,
      orderBy: login,
      tradeCommand: 'Buy',
      volume: 20,
      price: record.closePrice,
    });
    await cachedUntil(
      'v2.PF4.TradesGetTicket',
      { params: { ticket: market.order } },
      (d, e) => d === null && (e as { code: string }).code === 'NotFound',
    );
    const found = await cachedUntil<Trade>(
      'v2.PF4.TradeRecordGet',
      { params: { order: market.order } },
      (d) => d?.tradeRecordState === 'ClosedNormal',
    );
    expect(found).toMatchObject({ order: market.order, login, closePrice: record.closePrice, profit: record.profit });
    const live = await fails(c, 'v2.PF4.TradeRecordRequest', { params: { order: market.order } });
    expect(live).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
  });

  it('deletes the pending order: the answer is the deleted order, found closed as Deleted', async () => {
    const deleted = await tx({ tradeTransactionType: 'BrOrderDelete', order: pending.order });
    expect(deleted).toMatchObject({
      tradeTransactionType: 'BrOrderDelete',
      order: pending.order,
      tradeCommand: 'BuyLimit',
      orderBy: login,
    });
    await cachedUntil<Trade>(
      'v2.PF4.TradeRecordGet',
      { params: { order: pending.order } },
      (d) => d?.tradeRecordState === 'Deleted',
    );
    expect(await ok(c, 'v2.PF4.TradesGetByLogin', { params: { login, group: GROUP } })).toEqual([]);
  });
});

describe("trade operations' time-out class and idempotency", () => {
  it('apply the trade class (5 s) to transactions and checks, the read class to cached and live reads', async () => {
    const login = await newAccount('Timeouts');
    const open = await call(c, 'v2.PF4.TradeTransaction', {
      body: { tradeTransactionType: 'BrOrderOpen', tradeCommand: 'Buy', orderBy: login, symbol: SYMBOL, volume: 1 },
    });
    expect(open.headers.get('x-request-timeout-applied')).toBe('5');
    const checked = await call(c, 'v2.PF4.TradeCheckStops', {
      body: { tradeCommand: 'Buy', orderBy: login, symbol: SYMBOL, volume: 1 },
    });
    expect(checked.headers.get('x-request-timeout-applied')).toBe('5');
    expect((await call(c, 'v2.PF4.TradesGetByMarket')).headers.get('x-request-timeout-applied')).toBe('10');
    expect(
      (await call(c, 'v2.PF4.AdmTradesRequest', { params: { group: GROUP } })).headers.get('x-request-timeout-applied'),
    ).toBe('30');
  });

  it('a transaction repeated with the same Idempotency-Key is applied once and answered as the first time', async () => {
    const login = await newAccount('Idempotent');
    const options = {
      body: { tradeTransactionType: 'BrOrderOpen', tradeCommand: 'Buy', orderBy: login, symbol: SYMBOL, volume: 3 },
      headers: { 'Idempotency-Key': `trades-e2e-${login}` },
    };
    const first = await call<Tx>(c, 'v2.PF4.TradeTransaction', options);
    const again = await call<Tx>(c, 'v2.PF4.TradeTransaction', options);
    expect(first.body.error).toBeNull();
    expect(again.body.data).toEqual(first.body.data);
    expect((await sim.ok<Trade[]>('TradesUserRequest', { login })).map((t) => t.order)).toEqual([
      first.body.data!.order,
    ]);
  });
});

describe('v2.PF4.TradeRecordGet', () => {
  it('answers NotFound with the manager code for a ticket neither open nor recently closed, and names a bad order', async () => {
    expect(await fails(c, 'v2.PF4.TradeRecordGet', { params: { order: 2_000_000_000 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.TradeRecordGet', 'order', { params: { order: 0 } });
  });
});

describe('v2.PF4.TradeRecordRequest', () => {
  it('reads an open trade live as the server holds it; NotFound for a ticket that is not open', async () => {
    const login = await newAccount('Record request');
    const open = await buy(login);
    const server = await sim.ok<Trade>('TradeRecordRequest', { order: open.order });
    const live = await ok<Trade>(c, 'v2.PF4.TradeRecordRequest', { params: { order: open.order } });
    expect(live).toMatchObject({
      order: open.order,
      login,
      openPrice: server.openPrice,
      sl: server.sl,
      tp: server.tp,
      volume: server.volume,
      openTime: server.openTime,
    });
    expect(await fails(c, 'v2.PF4.TradeRecordRequest', { params: { order: 2_000_000_000 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.TradeRecordRequest', 'order', { params: { order: -3 } });
  });
});

describe('v2.PF4.TradeRecordsRequest', () => {
  it('answers the open trades among the tickets asked, leaving out those that are not open', async () => {
    const login = await newAccount('Records request');
    const a = await buy(login);
    const b = await buyLimit(login);
    const rows = await ok<Trade[]>(c, 'v2.PF4.TradeRecordsRequest', {
      query: { orders: [a.order, 2_000_000_000, b.order] },
    });
    expect(rows.map((t) => t.order).sort((x, y) => x - y)).toEqual([a.order, b.order].sort((x, y) => x - y));
    expect(rows.every((t) => t.login === login)).toBe(true);
    await refuses(c, 'v2.PF4.TradeRecordsRequest', 'orders');
    await refuses(c, 'v2.PF4.TradeRecordsRequest', 'orders', { query: { orders: ['x'] } });
  });
});

describe('v2.PF4.TradesRequest', () => {
  it("pages the open trades live by ticket; the pages make up the whole list, which is the server's", async () => {
    const same = await eventually(
      async () => {
        const { items } = await allPages<Trade>(c, 'v2.PF4.TradesRequest', 53);
        const whole = await ok<Trade[]>(c, 'v2.PF4.TradesRequest');
        const server = await sim.ok<{ items: Trade[] }>('TradesRequest', {});
        const orders = items.map((t) => t.order);
        return (
          JSON.stringify(orders) === JSON.stringify(whole.map((t) => t.order)) &&
          JSON.stringify(orders) === JSON.stringify(server.items.map((t) => t.order))
        );
      },
      10_000,
      100,
    );
    expect(same).toBe(true);
    await refusesTamperedCursor(c, 'v2.PF4.TradesRequest');
    await refuses(c, 'v2.PF4.TradesRequest', 'limit', { query: { limit: 0 } });
  });

  it("with a group answers the open trades of that group's accounts only, paged, and NotFound for an unknown group", async () => {
    const login = await newAccount('Group filter', 100_000, 'real\\ecn');
    const mine = await buy(login);
    const group = 'real\\ecn';
    const same = await eventually(
      async () => {
        const { items, pages } = await allPages<Trade>(c, 'v2.PF4.TradesRequest', 7, { query: { group } });
        const whole = await ok<Trade[]>(c, 'v2.PF4.TradesRequest', { query: { group } });
        const server = await sim.ok<Trade[]>('AdmTradesRequest', { group, openOnly: true });
        const orders = items.map((t) => t.order);
        return (
          pages > 1 &&
          orders.includes(mine.order) &&
          JSON.stringify(orders) === JSON.stringify(whole.map((t) => t.order)) &&
          JSON.stringify(orders) === JSON.stringify(server.map((t) => t.order))
        );
      },
      10_000,
      100,
    );
    expect(same).toBe(true);
    const rows = await ok<Trade[]>(c, 'v2.PF4.TradesRequest', { query: { group } });
    const owners = await sim.ok<Array<{ login: number; group: string }>>('UserRecordsRequest', {
      logins: [...new Set(rows.map((t) => t.login))],
    });
    expect(new Set(owners.map((u) => u.group))).toEqual(new Set([group]));
    expect(await fails(c, 'v2.PF4.TradesRequest', { query: { group: 'no\\such' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.TradesRequest', 'group', { query: { group: 'g'.repeat(17) } });
  });
});

describe('v2.PF4.TradeCheckStops', () => {
  const order = (extra: Record<string, unknown>) => ({
    tradeCommand: 'Buy',
    orderBy: 100000,
    symbol: SYMBOL,
    volume: 10,
    ...extra,
  });
  const check = (price: number | undefined, body: Record<string, unknown>) =>
    call<boolean>(c, 'v2.PF4.TradeCheckStops', { query: price === undefined ? {} : { price }, body });

  it('answers true when the stops are far enough from the reference price', async () => {
    const r = await check(1.2, order({ sl: 1.19, tp: 1.21 }));
    expect(r.body).toMatchObject({ data: true, error: null });
    // Without a reference price the live quote is the market.
    const q = await quote();
    expect((await check(undefined, order({ sl: round5(q.bid - 0.01), tp: round5(q.ask + 0.01) }))).body.data).toBe(
      true,
    );
  });

  it('answers false with the result code when the check refuses: stops too near, a pending price on the wrong side, a short expiration', async () => {
    // Buy closes at the reference bid, 1.2 less half the 12-point spread: an SL 2 points under it is inside the 10-point stops level.
    const near = await check(1.2, order({ sl: 1.19992, tp: 1.21 }));
    expect(near.body.data).toBe(false);
    expect(near.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'TradeBadStops' });
    const wrongSide = await check(1.2, order({ tradeCommand: 'BuyLimit', price: 1.25 }));
    expect(wrongSide.body.data).toBe(false);
    expect(wrongSide.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'TradeBadPrices' });
    const soon = await check(
      1.2,
      order({ tradeCommand: 'BuyLimit', price: 1.1, expiration: new Date(Date.now() + 60_000).toISOString() }),
    );
    expect(soon.body.data).toBe(false);
    expect(soon.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'TradeExpirationDenied' });
    // The same pending order an hour ahead passes.
    expect(
      (
        await check(
          1.2,
          order({ tradeCommand: 'BuyLimit', price: 1.1, expiration: new Date(Date.now() + 3_600_000).toISOString() }),
        )
      ).body.data,
    ).toBe(true);
  });

  it('is a plain error (data null) when the transaction cannot be checked, and refuses bad input naming the field', async () => {
    const unknown = await check(1.2, order({ symbol: 'NOSUCH' }));
    expect(unknown.body.data).toBeNull();
    expect(unknown.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.TradeCheckStops', 'body.price', { body: order({ tradeCommand: 'SellLimit' }) });
    await refuses(c, 'v2.PF4.TradeCheckStops', 'body.tradeCommand', { body: order({ tradeCommand: 'Balance' }) });
    await refuses(c, 'v2.PF4.TradeCheckStops', 'price', { query: { price: 'abc' }, body: order({}) });
  });
});

describe('v2.PF4.AdmTradeRecordModify', () => {
  it("writes the administrator's fields without market checks and answers the trade; the cache follows", async () => {
    const login = await newAccount('Admin modify');
    const open = await buy(login);
    const edited = await ok<Trade>(c, 'v2.PF4.AdmTradeRecordModify', {
      params: { ticket: open.order },
      body: { order: open.order, comment: 'adm edit', magic: 42, storage: -1.5, sl: 0.5 },
    });
    expect(edited).toMatchObject({
      order: open.order,
      login,
      comment: 'adm edit',
      magic: 42,
      storage: -1.5,
      sl: 0.5,
      tp: open.tp,
    });
    expect(await sim.ok<Trade>('TradeRecordRequest', { order: open.order })).toMatchObject({
      comment: 'adm edit',
      magic: 42,
      storage: -1.5,
      sl: 0.5,
    });
    await cachedUntil<Trade>(
      'v2.PF4.TradesGetTicket',
      { params: { ticket: open.order } },
      (d) => d?.comment === 'adm edit' && d?.magic === 42,
    );
  });

  it('refuses a body for another ticket or with bad values naming the field, and answers NotFound for an unknown ticket', async () => {
    const login = await newAccount('Admin modify refusals');
    const open = await buy(login);
    await refuses(c, 'v2.PF4.AdmTradeRecordModify', 'body.order', {
      params: { ticket: open.order },
      body: { order: open.order + 1, magic: 1 },
    });
    await refuses(c, 'v2.PF4.AdmTradeRecordModify', 'body.sl', { params: { ticket: open.order }, body: { sl: -1 } });
    await refuses(c, 'v2.PF4.AdmTradeRecordModify', 'body.comment', {
      params: { ticket: open.order },
      body: { comment: 'x'.repeat(32) },
    });
    expect(
      await fails(c, 'v2.PF4.AdmTradeRecordModify', { params: { ticket: 2_000_000_000 }, body: { magic: 1 } }),
    ).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect((await sim.ok<Trade>('TradeRecordRequest', { order: open.order })).magic).toBe(0);
  });
});

describe('v2.PF4.TradeClearRollback', () => {
  it('undoes a TP close held in the rollback buffer (true), then answers false; NotFound for a ticket never seen', async () => {
    const login = await newAccount('Rollback');
    const open = await buy(login);
    // A take-profit below the bid, written without market checks, closes the trade on the symbol's next tick.
    await ok(c, 'v2.PF4.AdmTradeRecordModify', {
      params: { ticket: open.order },
      body: { tp: round5(open.price - 0.01) },
    });
    const closed = await eventually(
      async () => (await sim.call('TradeRecordRequest', { order: open.order })).error !== undefined,
      8000,
      50,
    );
    expect(closed).toBe(true);
    const history = await sim.ok<Trade[]>('TradesUserHistory', { login });
    expect(history.find((h) => h.order === open.order)).toMatchObject({ activationType: 'TP' });
    expect(await ok<boolean>(c, 'v2.PF4.TradeClearRollback', { params: { order: open.order } })).toBe(true);
    const restored = await sim.ok<Trade>('TradeRecordRequest', { order: open.order });
    expect(restored).toMatchObject({ order: open.order, login, activationType: 'TPRollback' });
    expect((await sim.ok<Trade[]>('TradesUserHistory', { login })).some((h) => h.order === open.order)).toBe(false);
    expect(await ok<boolean>(c, 'v2.PF4.TradeClearRollback', { params: { order: open.order } })).toBe(false);
    expect(await fails(c, 'v2.PF4.TradeClearRollback', { params: { order: 2_000_000_000 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.TradeClearRollback', 'order', { params: { order: 0 } });
  });
});

describe('v2.PF4.AdmTradesRequest', () => {
  it("answers the group's open trades by ticket, with openOnly=false its closed trades too; NotFound for an unknown group", async () => {
    const group = 'real\\vip';
    const login = await newAccount('Adm trades', 100_000, group);
    const open = await buy(login);
    const gone = await buy(login);
    await tx({ tradeTransactionType: 'BrOrderClose', order: gone.order });
    let openOnly: Trade[] = [];
    const same = await eventually(async () => {
      openOnly = await ok<Trade[]>(c, 'v2.PF4.AdmTradesRequest', { params: { group } });
      const server = await sim.ok<Trade[]>('AdmTradesRequest', { group, openOnly: true });
      return JSON.stringify(openOnly.map((t) => t.order)) === JSON.stringify(server.map((t) => t.order));
    }, 5000);
    expect(same).toBe(true);
    expect(openOnly.map((t) => t.order)).toContain(open.order);
    expect(openOnly.map((t) => t.order)).not.toContain(gone.order);
    expect(openOnly.every((t) => t.tradeRecordState.startsWith('Open'))).toBe(true);
    const all = await ok<Trade[]>(c, 'v2.PF4.AdmTradesRequest', { params: { group }, query: { openOnly: false } });
    expect(all.find((t) => t.order === gone.order)).toMatchObject({ tradeRecordState: 'ClosedNormal', login });
    expect(all.some((t) => t.tradeCommand === 'Balance')).toBe(false);
    expect(await fails(c, 'v2.PF4.AdmTradesRequest', { params: { group: 'no\\such' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.AdmTradesRequest', 'openOnly', { params: { group }, query: { openOnly: 'maybe' } });
  });
});

describe('v2.PF4.AdmTradesDelete', () => {
  it('deletes every ticket listed, or none when one is not open (NotFound)', async () => {
    const login = await newAccount('Adm delete');
    const a = await buy(login);
    const b = await buyLimit(login);
    const keep = await buyLimit(login);
    const balance = (await sim.ok<{ balance: number }>('UserRecordRequest', { login })).balance;
    const refused = await fails(c, 'v2.PF4.AdmTradesDelete', { query: { orders: [keep.order, 2_000_000_000] } });
    expect(refused).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect((await sim.ok<Trade>('TradeRecordRequest', { order: keep.order })).order).toBe(keep.order);
    expect(await ok<boolean>(c, 'v2.PF4.AdmTradesDelete', { query: { orders: [a.order, b.order] } })).toBe(true);
    const left = await sim.ok<Trade[]>('TradesUserRequest', { login });
    expect(left.map((t) => t.order)).toEqual([keep.order]);
    const history = await sim.ok<Trade[]>('TradesUserHistory', { login });
    expect(
      history
        .filter((h) => h.tradeRecordState === 'Deleted')
        .map((h) => h.order)
        .sort((x, y) => x - y),
    ).toEqual([a.order, b.order].sort((x, y) => x - y));
    // A market trade is removed without touching the balance.
    expect((await sim.ok<{ balance: number }>('UserRecordRequest', { login })).balance).toBe(balance);
    await cachedUntil<Trade[]>(
      'v2.PF4.TradesGetByLogin',
      { params: { login, group: GROUP } },
      (d) => d?.length === 1 && d[0].order === keep.order,
    );
    await refuses(c, 'v2.PF4.AdmTradesDelete', 'orders');
  });
});

describe('v2.PF4.TradesSyncStart', () => {
  it('opens a sync session for a timestamp and refuses one out of range, naming it', async () => {
    expect(
      await ok<boolean>(c, 'v2.PF4.TradesSyncStart', { query: { timestamp: Math.floor(Date.now() / 1000) - 60 } }),
    ).toBe(true);
    expect(await ok<boolean>(c, 'v2.PF4.TradesSyncStart', { query: { timestamp: 0 } })).toBe(true);
    await refuses(c, 'v2.PF4.TradesSyncStart', 'timestamp', { query: { timestamp: -1 } });
    await refuses(c, 'v2.PF4.TradesSyncStart', 'timestamp', { query: { timestamp: 2 ** 31 } });
    await refuses(c, 'v2.PF4.TradesSyncStart', 'timestamp');
  });
});
