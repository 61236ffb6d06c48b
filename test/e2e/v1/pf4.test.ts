/**
 * v1 PF4 end to end: every operation's own rule checked against the simulator's state (read directly over the manager
 * protocol), v1's answers (the bare record or list, HTTP errors with the v1 error body), optional trailing path
 * segments with their defaults, and bad input answered 400 naming the field; no input makes any route answer 5xx.
 * The quote feed is off, so every quote, tick and bar is one the world started with or a test put there, and no trade
 * closes by itself while a test compares a balance. Each test works on accounts and symbols of its own.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog, findOperation } from '../../../shared/catalog/index.js';
import { CON_COMMON_SCHEMAS, CON_COMMON_SENSITIVE } from '../../../shared/catalog/v1/pf4.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile, type Client } from '../support.js';
import { call, notFound, ok, platformRefuses, refuses, type CallOptions } from './api.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
/** 1000 is the gateway's manager; 1001 this file's own view of the server. */
const managers = [
  { login: 1000, password: PASSWORD },
  { login: 1001, password: PASSWORD },
];
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
    ],
  },
});

type Rec = Record<string, any>;
let c: Client;
let sim: ManagerClient;
beforeAll(async () => {
  c = setup.client;
  sim = await ManagerClient.connect(c.stack.sim.port, 'demo-pf4');
  await sim.ok('login', { login: 1001, password: PASSWORD, pump: false });
});
afterAll(() => sim?.close());

const GROUP = 'demo\\forex';
const round5 = (v: number) => Number(v.toFixed(5));
const tx = (body: Rec) => ok<Rec>(c, 'v1.PF4.TradeTransaction', { body });
/** The server's trades as the contract has them (every field present), to compare with the gateway's answers. */
const asTrades = (rows: unknown) => shapeRecord('PF4Trade[]')(rows);
const quote = (symbol: string) => sim.ok<{ bid: number; ask: number }>('TickInfoLast', { symbol });

/** A fresh account of this file's own, created through v1 and funded by a v1 balance transaction. */
async function newAccount(name: string, deposit = 100_000, group = GROUP): Promise<number> {
  const user = await ok<Rec>(c, 'v1.PF4.UserRecordNew', { body: { login: 0, group, name } });
  if (deposit)
    await tx({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: user.login, price: deposit });
  return user.login as number;
}

/** Opens a market Buy of `symbol` with far stops; answers the executed transaction. */
async function buy(login: number, symbol = 'EURUSD', volume = 10): Promise<Rec> {
  const q = await quote(symbol);
  return tx({
    tradeTransactionType: 'BrOrderOpen',
    tradeCommand: 'Buy',
    orderBy: login,
    symbol,
    volume,
    sl: round5(q.bid * 0.95),
    tp: round5(q.ask * 1.05),
  });
}

/** Polls `id` until `accept` holds for its answer (the cache follows the server within milliseconds). */
async function until<T = any>(
  id: string,
  options: CallOptions,
  accept: (status: number, body: T) => boolean,
): Promise<T> {
  let last: { status: number; body: T } | undefined;
  const done = await eventually(
    async () => {
      last = await call<T>(c, id, options);
      return accept(last.status, last.body);
    },
    5000,
    20,
  );
  expect(
    done,
    `${id} never reached the expected state: ${last?.status} ${JSON.stringify(last?.body)?.slice(0, 300)}`,
  ).toBe(true);
  return last!.body;
}

// ---- Common -----------------------------------------------------------------------------------------------------

describe('v1.PF4.ManagerCommonEx and v1.PF4.ManagerCommon', () => {
  it('answer the whole common section (ConCommon) and the manager view without the sensitive settings (ConCommonShort)', async () => {
    const before = await sim.ok<Rec>('CfgRequestCommon', { full: true });
    try {
      await sim.ok('CfgUpdateCommon', {
        record: { timeSync: 'ntp.v1.test', antiFlood: 1, floodControl: 42, minApi: 1411, keepEmails: 12 },
      });
      const full = await ok<Rec>(c, 'v1.PF4.ManagerCommonEx');
      expect(full).toEqual(await sim.ok<Rec>('CfgRequestCommon', { full: true }));
      expect(full).toMatchObject({
        timeSync: 'ntp.v1.test',
        antiFlood: 1,
        floodControl: 42,
        minApi: 1411,
        keepEmails: 12,
        build: 1420,
      });
      expect(Object.keys(full)).toEqual((CON_COMMON_SCHEMAS.ConCommon as { required: string[] }).required);

      const short = await ok<Rec>(c, 'v1.PF4.ManagerCommon');
      const expected = { ...full };
      for (const field of CON_COMMON_SENSITIVE) delete expected[field];
      expect(short).toEqual(expected);
      expect(Object.keys(short)).toEqual((CON_COMMON_SCHEMAS.ConCommonShort as { required: string[] }).required);
      for (const field of CON_COMMON_SENSITIVE) expect(short).not.toHaveProperty(field);
    } finally {
      const { build: _b, version: _v, ...settings } = before;
      await sim.ok('CfgUpdateCommon', { record: settings });
    }
    expect(await ok(c, 'v1.PF4.ManagerCommonEx')).toEqual(before);
  });

  it('are published in the OpenAPI document as components, each v1 operation under its own PF4 tag', async () => {
    const doc = (await c.get('/openapi.json')).body as Rec;
    expect(doc.components.schemas.ConCommon).toEqual(CON_COMMON_SCHEMAS.ConCommon);
    expect(doc.components.schemas.ConCommonShort).toEqual(CON_COMMON_SCHEMAS.ConCommonShort);
    const path = `/api/PF4/{tradePlatform}/ManagerCommonEx`;
    expect(doc.paths[path].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ConCommon',
    });
    for (const entry of catalog.filter((e) => e.generation === 'v1' && e.family === 'PF4')) {
      const op = doc.paths[entry.path]?.[entry.method.toLowerCase()];
      expect(op, entry.id).toBeDefined();
      expect(op.operationId).toBe(entry.id);
      expect(op.tags).toEqual([entry.tag]);
      expect(entry.tag).toMatch(/^PF4 /);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '503', '504']));
    }
  });
});

describe('v1.PF4.ServerTime', () => {
  it("answers the trading server's clock as a bare date-time string", async () => {
    const before = Date.parse(await sim.ok<string>('ServerTime'));
    const r = await call<string>(c, 'v1.PF4.ServerTime');
    const after = Date.parse(await sim.ok<string>('ServerTime'));
    expect(r.status).toBe(200);
    expect(typeof r.body).toBe('string');
    expect(Date.parse(r.body)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(r.body)).toBeLessThanOrEqual(after);
  });
});

describe('v1.PF4.JournalRequest, v1.PF4.JournalRequestTo, v1.PF4.JournalRequestToMode, v1.PF4.JournalRequestToModeFilter', () => {
  it("reads the journal from `from`, to the server's time, mode 4 (Full) and no filter unless the path gives them", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const [a, b] = (await sim.ok<{ items: Rec[] }>('UsersRequest', { limit: 2 })).items.map((u) => u.login as number);
    const token = `V1-Journal-${Date.now()}`;
    await sim.ok('NotificationsSend', { record: { logins: [a, b], message: `${token} first` } });
    await sim.ok('NotificationsSend', { record: { logins: [a], message: `${token} second` } });
    const to = new Date(Date.now() + 1).toISOString();
    const mine = [
      `notification to 2 accounts (${a}, ${b}): ${token} first`,
      `notification to 1 accounts (${a}): ${token} second`,
    ];

    // Every segment: the filter any case, mode by index (4 = Full) or by name.
    const filtered = await ok<Rec[]>(c, 'v1.PF4.JournalRequestToModeFilter', {
      params: { from: since, to, mode: 4, filter: token.toLowerCase() },
    });
    expect(filtered.map((l) => l.message)).toEqual(mine);
    expect(filtered).toEqual(await sim.ok('JournalRequest', { from: since, to, mode: 'Full', filter: token }));
    expect(
      await ok(c, 'v1.PF4.JournalRequestToModeFilter', { params: { from: since, to, mode: 'Full', filter: token } }),
    ).toEqual(filtered);
    expect(
      await ok(c, 'v1.PF4.JournalRequestToModeFilter', { params: { from: since, to, mode: 'Trades', filter: token } }),
    ).toEqual([]);

    // Without the filter: every line of the window of that mode (0 = Standard holds the notifications).
    const standard = await ok<Rec[]>(c, 'v1.PF4.JournalRequestToMode', { params: { from: since, to, mode: 0 } });
    expect(standard).toEqual(await sim.ok('JournalRequest', { from: since, to, mode: 'Standard' }));
    expect(standard.map((l) => l.message)).toEqual(expect.arrayContaining(mine));
    expect(standard.every((l) => l.code === 'Standard')).toBe(true);
    const logins = await ok<Rec[]>(c, 'v1.PF4.JournalRequestToMode', {
      params: { from: '2000-01-01T00:00:00Z', to, mode: 1 },
    });
    expect(logins.length).toBeGreaterThan(0);
    expect(logins.every((l) => l.code === 'Logins')).toBe(true);

    // Without the mode: Full, every line of the window.
    const window = await ok<Rec[]>(c, 'v1.PF4.JournalRequestTo', { params: { from: since, to } });
    expect(window).toEqual(await sim.ok('JournalRequest', { from: since, to }));
    expect(window.map((l) => l.message)).toEqual(expect.arrayContaining(mine));
    expect(
      await ok(c, 'v1.PF4.JournalRequestTo', { params: { from: '2000-01-01T00:00:00Z', to: since } }),
    ).not.toContainEqual(expect.objectContaining({ message: mine[0] }));

    // Without `to`: up to the server's time, so a line written now is in it.
    await sim.ok('NotificationsSend', { record: { logins: [b], message: `${token} third` } });
    const open = await ok<Rec[]>(c, 'v1.PF4.JournalRequest', { params: { from: since } });
    expect(open.map((l) => l.message)).toEqual(
      expect.arrayContaining([...mine, `notification to 1 accounts (${b}): ${token} third`]),
    );
    expect(open.length).toBeGreaterThan(window.length);
  });

  it('refuses a bad from, to, mode or filter, and a to before from, naming the field', async () => {
    await refuses(c, 'v1.PF4.JournalRequest', 'from', { params: { from: 'yesterday' } });
    await refuses(c, 'v1.PF4.JournalRequestTo', 'to', { params: { from: '2025-01-01T00:00:00Z', to: 'soon' } });
    await refuses(c, 'v1.PF4.JournalRequestTo', 'to', {
      params: { from: '2025-01-02T00:00:00Z', to: '2025-01-01T00:00:00Z' },
    });
    await refuses(c, 'v1.PF4.JournalRequestToMode', 'mode', {
      params: { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z', mode: 8 },
    });
    await refuses(c, 'v1.PF4.JournalRequestToMode', 'mode', {
      params: { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z', mode: 'Everything' },
    });
    await refuses(c, 'v1.PF4.JournalRequestToModeFilter', 'filter', {
      params: { from: '2025-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z', mode: 4, filter: 'x'.repeat(257) },
    });
  });
});

// ---- Trades -----------------------------------------------------------------------------------------------------

describe('v1.PF4.TradesGet', () => {
  it('answers every open trade from the cache as a bare list by ticket, as the server holds them', async () => {
    const login = await newAccount('V1 TradesGet');
    const opened = await buy(login);
    const orders = await until<Rec[]>(
      'v1.PF4.TradesGet',
      {},
      (s, list) => s === 200 && list.some((t) => t.order === opened.order),
    );
    const server = await sim.ok<{ items: Rec[] }>('TradesRequest', {});
    expect(orders.map((t) => t.order)).toEqual(server.items.map((t) => t.order));
    expect(orders.find((t) => t.order === opened.order)).toMatchObject({
      login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 10,
    });
  });
});

describe('v1.PF4.TradesGetTicket', () => {
  it('answers one open trade; 404 with the v1 body when the ticket is not open; 400 below 1', async () => {
    const login = await newAccount('V1 TradesGetTicket');
    const opened = await buy(login);
    const trade = await until<Rec>('v1.PF4.TradesGetTicket', { params: { ticket: opened.order } }, (s) => s === 200);
    expect(trade).toMatchObject({ order: opened.order, login, openPrice: opened.price });
    await tx({ tradeTransactionType: 'BrOrderClose', order: opened.order, volume: 10 });
    const gone = await until<Rec>('v1.PF4.TradesGetTicket', { params: { ticket: opened.order } }, (s) => s === 404);
    expect(gone).toMatchObject({ errorType: 'PF4API', errorCode: 'InvalidData' });
    await refuses(c, 'v1.PF4.TradesGetTicket', 'ticket', { params: { ticket: 0 } });
    await refuses(c, 'v1.PF4.TradesGetTicket', 'ticket', { params: { ticket: 2147483648 } });
  });
});

describe('v1.PF4.TradeRecordsRequest', () => {
  it('reads the open trades among repeated `orders` live; tickets not open are left out', async () => {
    const login = await newAccount('V1 TradeRecordsRequest');
    const [a, b] = [await buy(login), await buy(login)];
    const trades = await ok<Rec[]>(c, 'v1.PF4.TradeRecordsRequest', {
      query: { orders: [a.order, 999_999_999, b.order] },
    });
    expect(trades.map((t) => t.order).sort()).toEqual([a.order, b.order].sort());
    expect(trades).toEqual(asTrades(await sim.ok('TradeRecordsRequest', { orders: [a.order, 999_999_999, b.order] })));
    await refuses(c, 'v1.PF4.TradeRecordsRequest', 'orders', { query: {} });
    await refuses(c, 'v1.PF4.TradeRecordsRequest', 'orders', { query: { orders: [a.order, 'x'] } });
  });
});

describe('v1.PF4.AdmTradesRequest', () => {
  it("answers the group's open trades, and with openOnly false their closed trades too; 404 for an unknown group", async () => {
    const login = await newAccount('V1 AdmTradesRequest', 100_000, 'real\\vip');
    const kept = await buy(login);
    const closed = await buy(login);
    await tx({ tradeTransactionType: 'BrOrderClose', order: closed.order, volume: 10 });
    const open = await ok<Rec[]>(c, 'v1.PF4.AdmTradesRequest', { params: { group: 'real\\vip', openOnly: 'true' } });
    expect(open).toEqual(asTrades(await sim.ok('AdmTradesRequest', { group: 'real\\vip', openOnly: true })));
    expect(open.map((t) => t.order)).toContain(kept.order);
    expect(open.map((t) => t.order)).not.toContain(closed.order);
    const all = await ok<Rec[]>(c, 'v1.PF4.AdmTradesRequest', { params: { group: 'real\\vip', openOnly: 'false' } });
    expect(all).toEqual(asTrades(await sim.ok('AdmTradesRequest', { group: 'real\\vip', openOnly: false })));
    expect(all.map((t) => t.order)).toEqual(expect.arrayContaining([kept.order, closed.order]));
    await notFound(c, 'v1.PF4.AdmTradesRequest', { params: { group: 'no\\such', openOnly: 'true' } });
    await refuses(c, 'v1.PF4.AdmTradesRequest', 'openOnly', { params: { group: 'real\\vip', openOnly: 'yes' } });
    await refuses(c, 'v1.PF4.AdmTradesRequest', 'group', { params: { group: 'g'.repeat(17), openOnly: 'true' } });
  });
});

describe('v1.PF4.TradesGetByLogin', () => {
  it("answers the account's open trades from the cache when it is in the group; 404 for another group", async () => {
    const login = await newAccount('V1 TradesGetByLogin');
    const opened = await buy(login);
    const list = await until<Rec[]>(
      'v1.PF4.TradesGetByLogin',
      { params: { login, group: GROUP } },
      (s, l) => s === 200 && l.length === 1,
    );
    expect(list.map((t) => t.order)).toEqual([opened.order]);
    expect(list).toEqual(asTrades(await sim.ok('TradesUserRequest', { login })));
    await notFound(c, 'v1.PF4.TradesGetByLogin', { params: { login, group: 'real\\vip' } });
    await refuses(c, 'v1.PF4.TradesGetByLogin', 'login', { params: { login: 'abc', group: GROUP } });
  });
});

describe('v1.PF4.AdmTradeRecordModify', () => {
  it("writes the stops, comment, magic, commission and storage of the trade the body names; the rest stays the server's", async () => {
    const login = await newAccount('V1 AdmTradeRecordModify');
    const opened = await buy(login);
    const read = await until<Rec>('v1.PF4.TradesGetTicket', { params: { ticket: opened.order } }, (s) => s === 200);
    const sl = round5(read.openPrice * 0.9);
    const changed = {
      ...read,
      sl,
      comment: 'v1 admin edit',
      magic: 77,
      commission: -1.5,
      storage: -0.25,
      openPrice: read.openPrice + 1,
      volume: 999,
    };
    const answered = await ok<Rec>(c, 'v1.PF4.AdmTradeRecordModify', { body: changed });
    const server = await sim.ok<Rec>('TradeRecordRequest', { order: opened.order });
    expect(server).toMatchObject({
      sl,
      comment: 'v1 admin edit',
      magic: 77,
      commission: -1.5,
      storage: -0.25,
      openPrice: read.openPrice,
      volume: read.volume,
    });
    expect(answered).toMatchObject({
      order: opened.order,
      sl,
      comment: 'v1 admin edit',
      magic: 77,
      openPrice: read.openPrice,
      volume: read.volume,
    });
    // Just the update fields work too.
    expect(await ok(c, 'v1.PF4.AdmTradeRecordModify', { body: { order: opened.order, tp: 0 } })).toMatchObject({
      order: opened.order,
      tp: 0,
      sl,
    });
    await notFound(c, 'v1.PF4.AdmTradeRecordModify', { body: { order: 999_999_999, sl: 1 } });
    // A record naming another account is refused for it, the trade untouched.
    const other = await newAccount('V1 AdmTradeRecordModify other');
    expect(
      await notFound(c, 'v1.PF4.AdmTradeRecordModify', {
        body: { ...changed, login: other, sl: round5(read.openPrice * 0.8), tp: 5 },
      }),
    ).toEqual({
      errorType: 'PF4API',
      errorCode: 'InvalidData',
      errorDescription: `body.login: order ${opened.order} is not a trade of login ${other} (it is login ${login}'s); login must be the ticket's, or absent`,
    });
    expect(await sim.ok<Rec>('TradeRecordRequest', { order: opened.order })).toMatchObject({
      login,
      sl,
      tp: 0,
      comment: 'v1 admin edit',
    });
    await refuses(c, 'v1.PF4.AdmTradeRecordModify', 'body.order', { body: { sl: 1 } });
    await refuses(c, 'v1.PF4.AdmTradeRecordModify', 'body.sl', { body: { order: opened.order, sl: -1 } });
    await refuses(c, 'v1.PF4.AdmTradeRecordModify', 'body.comment', {
      body: { order: opened.order, comment: 'c'.repeat(32) },
    });
    await refuses(c, 'v1.PF4.AdmTradeRecordModify', 'body', { rawBody: '{not json' });
    await refuses(c, 'v1.PF4.AdmTradeRecordModify', 'bogus', { body: { order: opened.order, bogus: 1 } });
  });
});

describe('v1.PF4.TradeTransaction', () => {
  it('opens, closes and books balance as the manager, answering the executed transaction; refusals carry the result code', async () => {
    const login = await newAccount('V1 TradeTransaction', 0);
    const deposit = await tx({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 5000,
    });
    expect(deposit).toMatchObject({ orderBy: login, price: 5000 });
    expect((await sim.ok<Rec>('UserRecordRequest', { login })).balance).toBe(5000);
    const q = await quote('EURUSD');
    const opened = await tx({
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: 'EURUSD',
      volume: 10,
    });
    expect(opened.price).toBe(q.ask);
    expect(await sim.ok<Rec>('TradeRecordRequest', { order: opened.order })).toMatchObject({
      login,
      tradeCommand: 'Buy',
      volume: 10,
      openPrice: q.ask,
    });
    const closed = await tx({ tradeTransactionType: 'BrOrderClose', order: opened.order, volume: 10 });
    expect(closed).toMatchObject({ order: opened.order, price: q.bid });
    expect((await sim.fails('TradeRecordRequest', { order: opened.order })).message).toContain('not found');
    const refusal = await platformRefuses(c, 'v1.PF4.TradeTransaction', 'TradeBadVolume', {
      body: {
        tradeTransactionType: 'BrOrderOpen',
        tradeCommand: 'Buy',
        orderBy: login,
        symbol: 'EURUSD',
        volume: 1_000_000_00,
      },
    });
    expect(refusal.errorDescription).toBeTruthy();
    await refuses(c, 'v1.PF4.TradeTransaction', 'body.symbol', {
      body: { tradeTransactionType: 'BrOrderOpen', tradeCommand: 'Buy', orderBy: login, volume: 10 },
    });
    await refuses(c, 'v1.PF4.TradeTransaction', 'body.tradeTransactionType', {
      body: { tradeTransactionType: 'Teleport', orderBy: login },
    });
  });
});

describe('v1.PF4.TradesUserHistory, v1.PF4.TradesUserHistoryFrom, v1.PF4.TradesUserHistoryFromTo', () => {
  it("reads the account's history from the epoch to the latest time unless the path names the window", async () => {
    const login = await newAccount('V1 TradesUserHistory');
    const t = await buy(login);
    await tx({ tradeTransactionType: 'BrOrderClose', order: t.order, volume: 10 });
    const whole = await ok<Rec[]>(c, 'v1.PF4.TradesUserHistory', { params: { login } });
    expect(whole).toEqual(asTrades(await sim.ok('TradesUserHistory', { login })));
    expect(whole.map((r) => r.tradeCommand)).toEqual(['Balance', 'Buy']);
    const closeTime = whole[1].closeTime as string;
    // From the close on: the trade only; a window ending before the deposit: nothing; the latest PF4 time is allowed.
    expect(
      (await ok<Rec[]>(c, 'v1.PF4.TradesUserHistoryFrom', { params: { login, fromTime: closeTime } })).map(
        (r) => r.order,
      ),
    ).toEqual([t.order]);
    expect(
      await ok(c, 'v1.PF4.TradesUserHistoryFromTo', {
        params: { login, fromTime: '1970-01-01T00:00:00Z', toTime: '2000-01-01T00:00:00Z' },
      }),
    ).toEqual([]);
    expect(
      await ok(c, 'v1.PF4.TradesUserHistoryFromTo', {
        params: { login, fromTime: '1970-01-01T00:00:00Z', toTime: '2038-01-19T03:14:07Z' },
      }),
    ).toEqual(whole);
    await notFound(c, 'v1.PF4.TradesUserHistory', { params: { login: 999_999_999 } });
    await refuses(c, 'v1.PF4.TradesUserHistoryFrom', 'fromTime', { params: { login, fromTime: 'monday' } });
    await refuses(c, 'v1.PF4.TradesUserHistoryFromTo', 'toTime', {
      params: { login, fromTime: '2025-01-02T00:00:00Z', toTime: '2025-01-01T00:00:00Z' },
    });
  });
});

// ---- Users ------------------------------------------------------------------------------------------------------

describe('v1.PF4.UsersGet', () => {
  it('answers every account from the cache by login, as the server holds them', async () => {
    const login = await newAccount('V1 UsersGet', 0);
    const users = await until<Rec[]>('v1.PF4.UsersGet', {}, (s, l) => s === 200 && l.some((u) => u.login === login));
    const server = await sim.ok<Rec[]>('UserRecordsRequest');
    expect(users.map((u) => u.login)).toEqual(server.map((u) => u.login).sort((a, b) => a - b));
    expect(users.find((u) => u.login === login)).toMatchObject({ name: 'V1 UsersGet', group: GROUP });
  });
});

describe('v1.PF4.UsersRequest', () => {
  it('reads every account live by login', async () => {
    const login = await newAccount('V1 UsersRequest', 0);
    const users = await ok<Rec[]>(c, 'v1.PF4.UsersRequest');
    expect(users).toEqual(
      (await sim.ok<{ items: Rec[] }>('UsersRequest', {})).items.map((u) =>
        expect.objectContaining({ login: u.login, balance: u.balance }),
      ),
    );
    expect(users.find((u) => u.login === login)).toMatchObject({ name: 'V1 UsersRequest' });
  });
});

describe('v1.PF4.UserRecordsRequest', () => {
  it('reads the repeated logins live, unknown ones left out; 400 naming logins when none is given', async () => {
    const a = await newAccount('V1 Records A', 0);
    const b = await newAccount('V1 Records B', 0);
    const users = await ok<Rec[]>(c, 'v1.PF4.UserRecordsRequest', { query: { logins: [a, 999_999_999, b] } });
    expect(users.map((u) => u.login).sort()).toEqual([a, b].sort());
    expect(users.map((u) => u.name).sort()).toEqual(['V1 Records A', 'V1 Records B']);
    await refuses(c, 'v1.PF4.UserRecordsRequest', 'logins', {});
    await refuses(c, 'v1.PF4.UserRecordsRequest', 'logins', { query: { logins: [0] } });
    await refuses(c, 'v1.PF4.UserRecordsRequest', 'logins', { query: { logins: ['2147483648'] } });
  });
});

describe('v1.PF4.UserRecordGet', () => {
  it('answers one account from the cache; 404 when unknown', async () => {
    const login = await newAccount('V1 UserRecordGet', 250);
    const user = await until<Rec>(
      'v1.PF4.UserRecordGet',
      { params: { login } },
      (s, u) => s === 200 && u.balance === 250,
    );
    expect(user).toMatchObject({ login, name: 'V1 UserRecordGet', group: GROUP, balance: 250 });
    expect(user).not.toHaveProperty('password');
    expect(await notFound(c, 'v1.PF4.UserRecordGet', { params: { login: 999_999_999 } })).toMatchObject({
      errorType: 'PF4API',
      errorCode: 'InvalidData',
    });
    await refuses(c, 'v1.PF4.UserRecordGet', 'login', { params: { login: -5 } });
  });
});

describe('v1.PF4.UserRecordNew', () => {
  it("creates the account the server then holds; the server's refusal is 400 PF4API with the result code", async () => {
    const user = await ok<Rec>(c, 'v1.PF4.UserRecordNew', {
      body: { group: 'real\\standard', name: 'V1 New', city: 'Lyon', leverage: 200 },
    });
    expect(await sim.ok<Rec>('UserRecordRequest', { login: user.login })).toMatchObject({
      group: 'real\\standard',
      name: 'V1 New',
      city: 'Lyon',
      leverage: 200,
    });
    expect(user).toMatchObject({ group: 'real\\standard', name: 'V1 New', leverage: 200 });
    await platformRefuses(c, 'v1.PF4.UserRecordNew', 'InvalidData', {
      body: { login: user.login, group: GROUP, name: 'Taken' },
    });
    await platformRefuses(c, 'v1.PF4.UserRecordNew', 'InvalidData', { body: { group: 'no\\such', name: 'Nobody' } });
    await refuses(c, 'v1.PF4.UserRecordNew', 'body.name', { body: { group: GROUP } });
    await refuses(c, 'v1.PF4.UserRecordNew', 'body.leverage', { body: { group: GROUP, name: 'X', leverage: 0 } });
  });
});

describe('v1.PF4.UserRecordUpdate', () => {
  it('writes the account record the body carries (login in the body); server-kept fields stay', async () => {
    const login = await newAccount('V1 Update', 300);
    const read = await until<Rec>(
      'v1.PF4.UserRecordGet',
      { params: { login } },
      (s, u) => s === 200 && u.balance === 300,
    );
    const before = await sim.ok<Rec>('UserRecordRequest', { login });
    const sent = {
      ...read,
      name: 'V1 Updated',
      city: 'Oslo',
      leverage: 50,
      comment: 'v1',
      balance: 1_000_000,
      registrationDate: '2001-01-01T00:00:00Z',
    };
    const answered = await ok<Rec>(c, 'v1.PF4.UserRecordUpdate', { body: sent });
    const after = await sim.ok<Rec>('UserRecordRequest', { login });
    expect(after).toMatchObject({
      name: 'V1 Updated',
      city: 'Oslo',
      leverage: 50,
      comment: 'v1',
      balance: 300,
      registrationDate: before.registrationDate,
      group: GROUP,
    });
    expect(answered).toMatchObject({ login, name: 'V1 Updated', city: 'Oslo', balance: 300 });
    // Only some fields: the rest keeps its value.
    await ok(c, 'v1.PF4.UserRecordUpdate', { body: { login, email: 'v1@example.com' } });
    expect(await sim.ok<Rec>('UserRecordRequest', { login })).toMatchObject({
      email: 'v1@example.com',
      city: 'Oslo',
      name: 'V1 Updated',
    });
    await notFound(c, 'v1.PF4.UserRecordUpdate', { body: { login: 999_999_999, name: 'Ghost' } });
    await refuses(c, 'v1.PF4.UserRecordUpdate', 'body.login', { body: { name: 'No login' } });
    await refuses(c, 'v1.PF4.UserRecordUpdate', 'body.leverage', { body: { login, leverage: 0 } });
    await platformRefuses(c, 'v1.PF4.UserRecordUpdate', 'InvalidData', { body: { login, group: 'no\\such' } });
  });
});

describe('v1.PF4.MarginLevelGet', () => {
  it('answers the cached margin level of an account with open trades; 404 without open trades', async () => {
    const login = await newAccount('V1 MarginLevelGet');
    await notFound(c, 'v1.PF4.MarginLevelGet', { params: { login } });
    await buy(login);
    const level = await until<Rec>('v1.PF4.MarginLevelGet', { params: { login } }, (s) => s === 200);
    const server = await sim.ok<Rec>('MarginLevelRequest', { login });
    expect(level).toMatchObject({
      login,
      group: GROUP,
      leverage: server.leverage,
      balance: server.balance,
      margin: server.margin,
    });
    await refuses(c, 'v1.PF4.MarginLevelGet', 'login', { params: { login: 0 } });
  });
});

describe('v1.PF4.MarginLevelRequest', () => {
  it('answers the margin level the server computes now; 404 for an unknown login', async () => {
    const login = await newAccount('V1 MarginLevelRequest', 777);
    const level = await ok<Rec>(c, 'v1.PF4.MarginLevelRequest', { params: { login } });
    const server = await sim.ok<Rec>('MarginLevelRequest', { login });
    expect(level).toMatchObject({ login, balance: 777, equity: server.equity, margin: 0, group: GROUP });
    await notFound(c, 'v1.PF4.MarginLevelRequest', { params: { login: 999_999_999 } });
  });
});

describe('v1.PF4.UserPasswordSet and v1.PF4.UserPasswordCheck', () => {
  it('set the main or investor password from a JSON string body and check it; a wrong one is 400 PF4API InvalidData', async () => {
    const login = await newAccount('V1 Passwords', 0);
    expect(await ok(c, 'v1.PF4.UserPasswordSet', { params: { login }, body: 'Main-pass-1' })).toBe(true);
    expect(await sim.ok('UserPasswordCheck', { login, password: 'Main-pass-1' })).toBe(true);
    expect(await ok(c, 'v1.PF4.UserPasswordCheck', { params: { login }, body: 'Main-pass-1' })).toBe(true);
    expect(
      await ok(c, 'v1.PF4.UserPasswordSet', {
        params: { login },
        query: { changeInvestor: true, cleanPubkey: false },
        body: 'View-pass-1',
      }),
    ).toBe(true);
    expect(await ok(c, 'v1.PF4.UserPasswordCheck', { params: { login }, body: 'View-pass-1' })).toBe(true);
    expect(await ok(c, 'v1.PF4.UserPasswordCheck', { params: { login }, body: 'Main-pass-1' })).toBe(true);
    const wrong = await platformRefuses(c, 'v1.PF4.UserPasswordCheck', 'InvalidData', {
      params: { login },
      body: 'not-it',
    });
    expect(wrong.errorDescription).toContain('invalid login or password');
    await platformRefuses(c, 'v1.PF4.UserPasswordSet', 'InvalidData', { params: { login }, body: 'abc' });
    await refuses(c, 'v1.PF4.UserPasswordSet', 'body', { params: { login }, body: { password: 'x' } });
    await refuses(c, 'v1.PF4.UserPasswordCheck', 'body', { params: { login }, body: 12345 });
    await refuses(c, 'v1.PF4.UserPasswordSet', 'changeInvestor', {
      params: { login },
      query: { changeInvestor: 'maybe' },
      body: 'Main-pass-2',
    });
  });
});

/** Gives the account a balance its history does not explain: a restore writes the balance without a deal. */
async function unbalance(login: number, by: number): Promise<void> {
  const user = await sim.ok<Rec>('UserRecordRequest', { login });
  await sim.ok('BackupRestoreUsers', { records: [{ login, balance: Math.round((user.balance + by) * 100) / 100 }] });
}

describe('v1.PF4.AdmBalanceCheck', () => {
  it('answers the difference between the balance and the history; 0 when intact; 404 for an unknown login', async () => {
    const login = await newAccount('V1 BalanceCheck', 1000);
    expect(await ok(c, 'v1.PF4.AdmBalanceCheck', { params: { login } })).toEqual({ login, diff: 0 });
    await unbalance(login, 12.5);
    const diff = await ok<Rec>(c, 'v1.PF4.AdmBalanceCheck', { params: { login } });
    expect(diff).toEqual(await sim.ok('AdmBalanceCheck', { login }));
    expect(diff).toEqual({ login, diff: 12.5 });
    await notFound(c, 'v1.PF4.AdmBalanceCheck', { params: { login: 999_999_999 } });
  });
});

describe('v1.PF4.AdmBalanceFix', () => {
  it("fixes the path login's balance only (GET); 404 for an unknown login", async () => {
    const fixed = await newAccount('V1 BalanceFix A', 1000);
    const other = await newAccount('V1 BalanceFix B', 1000);
    await unbalance(fixed, 40);
    await unbalance(other, -15);
    expect(await ok(c, 'v1.PF4.AdmBalanceFix', { params: { login: fixed } })).toBe(true);
    expect(await sim.ok('AdmBalanceCheck', { login: fixed })).toEqual({ login: fixed, diff: 0 });
    expect((await sim.ok<Rec>('UserRecordRequest', { login: fixed })).balance).toBe(1000);
    expect(await sim.ok('AdmBalanceCheck', { login: other })).toEqual({ login: other, diff: -15 });
    await notFound(c, 'v1.PF4.AdmBalanceFix', { params: { login: 999_999_999 } });
    await refuses(c, 'v1.PF4.AdmBalanceFix', 'login', { params: { login: 'all' } });
  });
});

// ---- Symbols ----------------------------------------------------------------------------------------------------

describe('v1.PF4.SymbolsGetAll', () => {
  it("answers an active symbol's configuration from the cache; 404 once it is hidden or when unknown", async () => {
    const cached = await ok<Rec>(c, 'v1.PF4.SymbolsGetAll', { params: { symbol: 'AUDUSD' } });
    expect(cached).toEqual(await ok(c, 'v1.PF4.CfgRequestSymbol', { params: { symbol: 'AUDUSD' } }));
    expect(cached).toMatchObject({
      symbol: 'AUDUSD',
      digits: (await sim.ok<Rec>('CfgRequestSymbol', { symbol: 'AUDUSD' })).digits,
    });
    await notFound(c, 'v1.PF4.SymbolsGetAll', { params: { symbol: 'NOSUCH' } });
    await refuses(c, 'v1.PF4.SymbolsGetAll', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

describe('v1.PF4.CfgRequestSymbol', () => {
  it("reads one symbol's configuration live; 404 when unknown", async () => {
    const symbol = await ok<Rec>(c, 'v1.PF4.CfgRequestSymbol', { params: { symbol: 'GBPUSD' } });
    const server = await sim.ok<Rec>('CfgRequestSymbol', { symbol: 'GBPUSD' });
    for (const [field, value] of Object.entries(symbol))
      if (field in server) expect(value, field).toEqual(server[field]);
    expect(symbol.symbol).toBe('GBPUSD');
    await notFound(c, 'v1.PF4.CfgRequestSymbol', { params: { symbol: 'NOSUCH' } });
  });
});

describe('v1.PF4.CfgRequestSymbolGroup', () => {
  it('reads the 32 security group slots live in slot order', async () => {
    const groups = await ok<Rec[]>(c, 'v1.PF4.CfgRequestSymbolGroup');
    expect(groups).toHaveLength(32);
    expect(groups).toEqual(await sim.ok('CfgRequestSymbolGroup'));
    expect(groups[0].name).toBeTruthy();
  });
});

describe('v1.PF4.SymbolInfoGet', () => {
  it("answers an active symbol's cached summary as the server computes it; 404 when not loaded", async () => {
    await sim.ok('SymbolSendTick', { symbol: 'NZDUSD', bid: 0.60101, ask: 0.60117 });
    const info = await until<Rec>(
      'v1.PF4.SymbolInfoGet',
      { params: { symbol: 'NZDUSD' } },
      (s, i) => s === 200 && i.bid === 0.60101,
    );
    const server = await sim.ok<Rec>('SymbolInfoRequest', { symbol: 'NZDUSD' });
    expect(info).toMatchObject({
      symbol: 'NZDUSD',
      bid: 0.60101,
      ask: 0.60117,
      digits: server.digits,
      spread: server.spread,
      point: server.point,
    });
    await notFound(c, 'v1.PF4.SymbolInfoGet', { params: { symbol: 'NOSUCH' } });
  });
});

describe('v1.PF4.SymbolSessionsGet', () => {
  it('answers the 7 weekday sessions from the cache as the server has them; 404 when unknown', async () => {
    const days = await ok<Rec[]>(c, 'v1.PF4.SymbolSessionsGet', { params: { symbol: 'USDJPY' } });
    expect(days.map((d) => d.dayOfWeek)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(days).toEqual(await sim.ok('SymbolSessionsGet', { symbol: 'USDJPY' }));
    await notFound(c, 'v1.PF4.SymbolSessionsGet', { params: { symbol: 'NOSUCH' } });
  });
});

describe('v1.PF4.SymbolChange', () => {
  it('sets the given quick-change fields of the symbol', async () => {
    const before = await sim.ok<Rec>('CfgRequestSymbol', { symbol: 'EURGBP' });
    try {
      expect(await ok(c, 'v1.PF4.SymbolChange', { body: { symbol: 'EURGBP', spread: 33, stopsLevel: 12 } })).toBe(true);
      const after = await sim.ok<Rec>('CfgRequestSymbol', { symbol: 'EURGBP' });
      expect(after).toMatchObject({ spread: 33, stopsLevel: 12 });
      expect({ ...after, spread: before.spread, stopsLevel: before.stopsLevel }).toEqual(before);
    } finally {
      await sim.ok('CfgUpdateSymbol', {
        symbol: 'EURGBP',
        record: { spread: before.spread, stopsLevel: before.stopsLevel },
      });
    }
    await refuses(c, 'v1.PF4.SymbolChange', 'body.spread', { body: { symbol: 'EURGBP', spread: -1 } });
    await refuses(c, 'v1.PF4.SymbolChange', 'body.symbol', { body: { spread: 1 } });
    await platformRefuses(c, 'v1.PF4.SymbolChange', 'InvalidData', { body: { symbol: 'NOSUCH', spread: 1 } });
  });
});

describe('v1.PF4.SymbolsRefresh', () => {
  it('has the server hand every active symbol over afresh (GET)', async () => {
    const from = new Date().toISOString();
    expect(await ok(c, 'v1.PF4.SymbolsRefresh')).toBe(true);
    const active = await sim.ok<Rec[]>('SymbolsRequest');
    const lines = await sim.ok<Rec[]>('JournalRequest', { from, filter: 'symbols refreshed' });
    expect(lines.map((l) => l.message)).toEqual([`symbols refreshed: ${active.length}`]);
  });
});

describe('v1.PF4.SymbolHide and v1.PF4.SymbolAdd', () => {
  it('take a symbol out of the selected symbols and put it back (GET); the cache follows', async () => {
    const symbol = 'BTCUSD';
    const active = async () => (await sim.ok<Rec[]>('SymbolsRequest')).map((s) => s.symbol as string);
    expect(await active()).toContain(symbol);
    try {
      expect(await ok(c, 'v1.PF4.SymbolHide', { params: { symbol } })).toBe(true);
      expect(await active()).not.toContain(symbol);
      await until('v1.PF4.SymbolsGetAll', { params: { symbol } }, (s) => s === 404);
      await platformRefuses(c, 'v1.PF4.TradeTransaction', 'TradeDisable', {
        body: {
          tradeTransactionType: 'BrOrderOpen',
          tradeCommand: 'Buy',
          orderBy: await newAccount('V1 Hidden'),
          symbol,
          volume: 10,
        },
      });
    } finally {
      expect(await ok(c, 'v1.PF4.SymbolAdd', { params: { symbol } })).toBe(true);
    }
    expect(await active()).toContain(symbol);
    const back = await until<Rec>('v1.PF4.SymbolsGetAll', { params: { symbol } }, (s) => s === 200);
    expect(back.symbol).toBe(symbol);
    await platformRefuses(c, 'v1.PF4.SymbolAdd', 'InvalidData', { params: { symbol: 'NOSUCH' } });
    await refuses(c, 'v1.PF4.SymbolHide', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

// ---- Market watch, ticks and charts -----------------------------------------------------------------------------

describe('v1.PF4.TickInfoLast and v1.PF4.TickInfoLastSymbol', () => {
  it('answer the last tick of every quoted symbol and of one, from the cache; 404 for a symbol without quotes', async () => {
    await sim.ok('SymbolSendTick', { symbol: 'USDCHF', bid: 0.88011, ask: 0.88027 });
    const one = await until<Rec>(
      'v1.PF4.TickInfoLastSymbol',
      { params: { symbol: 'USDCHF' } },
      (s, t) => s === 200 && t.bid === 0.88011,
    );
    const server = await sim.ok<Rec>('TickInfoLast', { symbol: 'USDCHF' });
    expect(one).toMatchObject({ symbol: 'USDCHF', bid: 0.88011, ask: 0.88027 });
    expect(Date.parse(one.time)).toBe(Date.parse(server.time));
    const all = await ok<Rec[]>(c, 'v1.PF4.TickInfoLast');
    expect(all.find((t) => t.symbol === 'USDCHF')).toEqual(one);
    expect(all.map((t) => t.symbol)).toEqual((await sim.ok<Rec[]>('TickInfoLast')).map((t) => t.symbol).sort());
    await notFound(c, 'v1.PF4.TickInfoLastSymbol', { params: { symbol: 'NOSUCH' } });
  });
});

describe('v1.PF4.TicksRequest', () => {
  it('reads the ticks of the path window with the path flags, as the server has them', async () => {
    const start = new Date(Date.now() - 1000).toISOString();
    await sim.ok('SymbolSendTick', { symbol: 'XAGUSD', bid: 24.111, ask: 24.141 });
    await sim.ok('SymbolSendTick', { symbol: 'XAGUSD', bid: 24.222, ask: 24.252 });
    const end = new Date(Date.now() + 1000).toISOString();
    const ticks = await ok<Rec[]>(c, 'v1.PF4.TicksRequest', { params: { symbol: 'XAGUSD', start, end, flags: 'All' } });
    expect(ticks).toEqual(await sim.ok('TicksRequest', { symbol: 'XAGUSD', start, end, flags: 'All' }));
    expect(ticks.map((t) => [t.bid, t.flags])).toEqual([
      [24.111, 'Raw'],
      [24.222, 'Raw'],
    ]);
    expect(
      await ok(c, 'v1.PF4.TicksRequest', { params: { symbol: 'XAGUSD', start, end, flags: 'Raw, Normal' } }),
    ).toEqual(ticks);
    expect(await ok(c, 'v1.PF4.TicksRequest', { params: { symbol: 'XAGUSD', start, end, flags: 'Normal' } })).toEqual(
      [],
    );
    expect(
      await ok(c, 'v1.PF4.TicksRequest', {
        params: { symbol: 'XAGUSD', start: end, end: '2030-01-01T00:00:00Z', flags: 'All' },
      }),
    ).toEqual([]);
    await refuses(c, 'v1.PF4.TicksRequest', 'flags', { params: { symbol: 'XAGUSD', start, end, flags: 'Bogus' } });
    await refuses(c, 'v1.PF4.TicksRequest', 'end', {
      params: { symbol: 'XAGUSD', start: end, end: start, flags: 'All' },
    });
    await refuses(c, 'v1.PF4.TicksRequest', 'start', { params: { symbol: 'XAGUSD', start: 'now', end, flags: 'All' } });
    await platformRefuses(c, 'v1.PF4.TicksRequest', 'InvalidData', {
      params: { symbol: 'NOSUCH', start, end, flags: 'All' },
    });
  });
});

describe('v1.PF4.ChartRequest', () => {
  it('reads the bars of the path period and window by the path mode, as the server has them', async () => {
    const T = (hhmm: string) => `2024-03-05T${hhmm}:00.000Z`;
    const bars = ['10:00', '10:15', '10:30'].map((t, i) => ({
      time: T(t),
      open: 160 + i,
      high: 161 + i,
      low: 159 + i,
      close: 160.5 + i,
      volume: 5 + i,
    }));
    await sim.ok('ChartAdd', { symbol: 'EURJPY', period: 'M15', record: { rates: bars } });
    try {
      const window = { symbol: 'EURJPY', period: 'M15', start: T('10:10'), end: T('10:40') };
      for (const mode of ['RangeIn', 'RangeOut', 'RangeLast', 'RangeInExcludeOutOfRage']) {
        const got = await ok<Rec[]>(c, 'v1.PF4.ChartRequest', { params: { ...window, mode } });
        expect(got, mode).toEqual(await sim.ok('ChartRequest', { ...window, mode }));
      }
      expect(await ok(c, 'v1.PF4.ChartRequest', { params: { ...window, mode: 'RangeIn' } })).toEqual(bars.slice(1));
      expect(await ok(c, 'v1.PF4.ChartRequest', { params: { ...window, mode: 'RangeOut' } })).toEqual(bars);
      expect(await ok(c, 'v1.PF4.ChartRequest', { params: { ...window, period: 'H1', mode: 'RangeIn' } })).toEqual([]);
    } finally {
      await sim.ok('ChartDelete', {
        symbol: 'EURJPY',
        period: 'M15',
        record: { rates: bars.map((b) => ({ time: b.time })) },
      });
    }
    const p = { symbol: 'EURJPY', period: 'M15', start: T('10:00'), end: T('11:00'), mode: 'RangeIn' };
    await refuses(c, 'v1.PF4.ChartRequest', 'period', { params: { ...p, period: 'M2' } });
    await refuses(c, 'v1.PF4.ChartRequest', 'mode', { params: { ...p, mode: 'Sideways' } });
    await refuses(c, 'v1.PF4.ChartRequest', 'end', { params: { ...p, end: T('09:00') } });
  });
});

// ---- Every route against bad input ------------------------------------------------------------------------------

describe('every v1 PF4 route', () => {
  const v1 = () => catalog.filter((e) => e.generation === 'v1' && e.family === 'PF4');
  const BAD = ['abc', '0', '-1', '2147483648', '1e3', ' ', 'x'.repeat(300), '%', 'null', '\u00e9\u20ac'];
  const BODIES: Array<CallOptions> = [
    { rawBody: '{oops' },
    { body: [] },
    { body: {} },
    { body: 'str' },
    { body: null },
    { body: 12 },
    { body: { order: 'x', login: -1 } },
  ];

  it('answers bad path, query and body input with a 400 (or 404 for a well-formed unknown key), never a 5xx', async () => {
    const statuses = new Map<number, number>();
    for (const entry of v1()) {
      const names = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((n) => n !== 'tradePlatform');
      const queryNames = Object.keys(entry.query?.shape ?? {});
      if (!names.length && !queryNames.length && !entry.body) {
        // No inputs: anything else in the query is ignored.
        const r = await call(c, entry.id, { query: { x: BAD[0], login: BAD[1] } });
        expect(r.status, `${entry.id}: ${r.text.slice(0, 200)}`).toBe(200);
        continue;
      }
      for (const bad of BAD) {
        const params = Object.fromEntries(names.map((n) => [n, bad]));
        const query = Object.fromEntries(queryNames.map((n) => [n, [bad, bad]]));
        const bodies = entry.body ? BODIES : [{}];
        for (const body of bodies) {
          const r = await call(c, entry.id, { params, query, ...body });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          expect(
            [400, 404],
            `${entry.id} ${JSON.stringify(params)} ${JSON.stringify(query)} ${JSON.stringify(body)}: ${r.text.slice(0, 200)}`,
          ).toContain(r.status);
          if (r.status === 400 && r.body.errorType === 'Validation')
            expect(r.body.errorDescription).toMatch(/^[\w.]+: /);
        }
      }
    }
    expect(statuses.get(400)).toBeGreaterThan(100);
  });

  it("refuses a wrong time budget with 400 and answers the applied budget by the operation's class", async () => {
    const r = await call(c, 'v1.PF4.UsersGet', { headers: { 'X-Request-Timeout': '301' } });
    expect(r.status).toBe(400);
    expect(r.body.errorDescription).toContain('X-Request-Timeout');
    for (const [id, seconds] of [
      ['v1.PF4.SymbolsRefresh', 60],
      ['v1.PF4.JournalRequest', 30],
      ['v1.PF4.SymbolAdd', 15],
      ['v1.PF4.AdmBalanceFix', 5],
      ['v1.PF4.TickInfoLast', 10],
    ] as const) {
      const entry = findOperation(id)!;
      const params = Object.fromEntries([...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], 'x'.repeat(40)]));
      const answer = await call(c, id, { params });
      expect(answer.headers.get('x-request-timeout-applied'), id).toBe(String(seconds));
    }
  });
});
