/**
 * What a client written for the reference product sends, end to end through plain `fetch`: trade transactions named
 * in the reference vocabulary (OpenMarket, ModifyTrade, CloseMarket, OpenPending, ModifyPending, DeletePending,
 * BalanceAdd, CreditAdd) run as the platform's own transactions, on v2 and v1, checked against the trading server's
 * state by read operations, a name acting on a ticket of another kind of order, or on another account's ticket, refused with the ticket untouched; and the smaller acceptances: ExternalCommandJSON without a body, a backup read with an empty
 * `request=`, UsersGroupOp Delete carrying `leverage: 0`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackAndManagerForFile, type Client, type Envelope } from '../support.js';
import { call, ok } from './api.js';

type Row = Record<string, any>;

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

const SYMBOL = 'EURUSD';
const round5 = (v: number) => Number(v.toFixed(5));

/** One request as a stock client sends it: the path and query text as given, a JSON body only when there is one. */
async function send<T = any>(method: string, pathAndQuery: string, body?: unknown): Promise<Envelope<T>> {
  const res = await fetch(`${c.stack.edgeUrl}/api/v2/PF4/${c.stack.platforms.pf4}/${pathAndQuery}`, {
    method,
    headers: {
      authorization: `Bearer ${c.token}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${pathAndQuery}`).toBe(200);
  return (await res.json()) as Envelope<T>;
}

/** A TradeTransaction that must succeed; answers the executed transaction. */
async function transaction(body: Row): Promise<Row> {
  const answer = await send<Row>('POST', 'TradeTransaction', body);
  expect(answer.error, JSON.stringify(body)).toBeNull();
  return answer.data!;
}

const quote = () => sim.ok<{ bid: number; ask: number }>('TickInfoLast', { symbol: SYMBOL });
/** The trade as the server holds it now, read live through the gateway; null once it is no longer open. */
const liveTrade = async (order: number): Promise<Row | null> =>
  (await call<Row>(c, 'v2.PF4.TradeRecordRequest', { params: { order } })).body.data;
const account = (login: number) => ok<Row>(c, 'v2.PF4.UserRecordRequest', { params: { login } });

async function newAccount(name: string): Promise<number> {
  const created = await send<Row>('POST', 'UserRecordNew', { login: 0, group: 'demo\\forex', name });
  expect(created.error).toBeNull();
  return created.data!.login as number;
}

describe('v2.PF4.TradeTransaction in the reference vocabulary', () => {
  it('BalanceAdd and CreditAdd make balance and credit entries, with or without the command they imply', async () => {
    const login = await newAccount('reference balance');
    const deposit = await transaction({
      tradeTransactionType: 'BalanceAdd',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 50_000,
      comment: 'deposit',
    });
    expect(deposit).toMatchObject({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 50_000,
    });
    expect(await transaction({ tradeTransactionType: 'BalanceAdd', orderBy: login, price: -1_000 })).toMatchObject({
      tradeCommand: 'Balance',
      price: -1_000,
    });
    expect(await transaction({ tradeTransactionType: 'CreditAdd', orderBy: login, price: 700 })).toMatchObject({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Credit',
      price: 700,
    });
    expect(await account(login)).toMatchObject({ login, balance: 49_000, credit: 700 });
    expect(await sim.ok<Row>('UserRecordRequest', { login })).toMatchObject({ balance: 49_000, credit: 700 });
  });

  it('OpenMarket opens a market trade, ModifyTrade moves its stops, CloseMarket closes it', async () => {
    const login = await newAccount('reference market');
    await transaction({ tradeTransactionType: 'BalanceAdd', tradeCommand: 'Balance', orderBy: login, price: 100_000 });
    const q = await quote();
    const opened = await transaction({
      tradeTransactionType: 'OpenMarket',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: SYMBOL,
      volume: 20,
      sl: round5(q.bid - 0.05),
      tp: round5(q.ask + 0.05),
      comment: 'reference open',
    });
    expect(opened).toMatchObject({
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: login,
      symbol: SYMBOL,
      volume: 20,
    });
    const order = opened.order as number;
    expect(await liveTrade(order)).toMatchObject({
      order,
      login,
      tradeCommand: 'Buy',
      symbol: SYMBOL,
      volume: 20,
      openPrice: opened.price,
      comment: 'reference open',
    });

    const sl = round5(q.bid - 0.04);
    const tp = round5(q.ask + 0.06);
    expect(await transaction({ tradeTransactionType: 'ModifyTrade', order, sl, tp })).toMatchObject({
      tradeTransactionType: 'BrOrderModify',
      order,
      sl,
      tp,
    });
    expect(await liveTrade(order)).toMatchObject({ order, sl, tp, volume: 20 });

    // Names of pending orders do not act on a market trade (the platform's BrOrderDelete would delete it).
    for (const name of ['DeletePending', 'ActivatePending', 'ModifyPending']) {
      const refused = await send('POST', 'TradeTransaction', { tradeTransactionType: name, order, price: q.ask });
      expect(refused.error, name).toMatchObject({
        code: 'Validation',
        message: `body.order: order ${order} is a Buy trade; ${name} acts only on BuyLimit, SellLimit, BuyStop, SellStop orders`,
      });
    }
    expect(await liveTrade(order)).toMatchObject({ order, sl, tp, volume: 20, tradeCommand: 'Buy' });

    const closed = await transaction({ tradeTransactionType: 'CloseMarket', tradeCommand: 'Buy', order, volume: 20 });
    expect(closed).toMatchObject({ tradeTransactionType: 'BrOrderClose', order, volume: 20 });
    expect(await liveTrade(order)).toBeNull();
    const history = await sim.ok<Row[]>('TradesUserHistory', { login });
    expect(history.find((t) => t.order === order)).toMatchObject({
      order,
      tradeCommand: 'Buy',
      closePrice: closed.price,
    });
  });

  it('OpenPending places a pending order, ModifyPending moves its price, DeletePending cancels it', async () => {
    const login = await newAccount('reference pending');
    await transaction({ tradeTransactionType: 'BalanceAdd', orderBy: login, price: 100_000 });
    const q = await quote();
    const price = round5(q.ask * 0.8);
    const placed = await transaction({
      tradeTransactionType: 'OpenPending',
      tradeCommand: 'BuyLimit',
      orderBy: login,
      symbol: SYMBOL,
      volume: 10,
      price,
    });
    expect(placed).toMatchObject({ tradeTransactionType: 'BrOrderOpen', tradeCommand: 'BuyLimit', price });
    const order = placed.order as number;
    expect(await liveTrade(order)).toMatchObject({ order, login, tradeCommand: 'BuyLimit', openPrice: price });

    const moved = round5(q.ask * 0.79);
    expect(
      await transaction({ tradeTransactionType: 'ModifyPending', tradeCommand: 'BuyLimit', order, price: moved }),
    ).toMatchObject({ order, price: moved });
    expect(await liveTrade(order)).toMatchObject({ order, tradeCommand: 'BuyLimit', openPrice: moved });

    // Names of market trades do not act on a pending order.
    const closing = await send('POST', 'TradeTransaction', { tradeTransactionType: 'CloseMarket', order, volume: 10 });
    expect(closing.error).toMatchObject({
      code: 'Validation',
      message: `body.order: order ${order} is a BuyLimit trade; CloseMarket acts only on Buy, Sell orders`,
    });
    expect(await liveTrade(order)).toMatchObject({ order, tradeCommand: 'BuyLimit', openPrice: moved });

    expect(await transaction({ tradeTransactionType: 'DeletePending', order })).toMatchObject({
      tradeTransactionType: 'BrOrderDelete',
      order,
    });
    expect(await liveTrade(order)).toBeNull();
  });

  it("refuses a transaction on another account's ticket (orderBy not its login), the trade untouched, v2 and v1", async () => {
    const owner = await newAccount('reference owner');
    const other = await newAccount('reference other');
    for (const login of [owner, other])
      await transaction({ tradeTransactionType: 'BalanceAdd', orderBy: login, price: 100_000 });
    const opened = await transaction({
      tradeTransactionType: 'OpenMarket',
      tradeCommand: 'Buy',
      orderBy: owner,
      symbol: SYMBOL,
      volume: 20,
    });
    const order = opened.order as number;
    const message = `body.orderBy: order ${order} is not a trade of login ${other} (it is login ${owner}'s); orderBy must be the ticket's login, or absent`;
    // The reference name, and the platform's own names acting on a ticket, alike.
    for (const body of [
      { tradeTransactionType: 'CloseMarket', order, orderBy: other, volume: 10 },
      { tradeTransactionType: 'BrOrderClose', order, orderBy: other, volume: 10 },
      { tradeTransactionType: 'ModifyTrade', order, orderBy: other, sl: 0.5 },
    ]) {
      const refused = await send('POST', 'TradeTransaction', body);
      expect(refused, body.tradeTransactionType).toEqual({
        data: null,
        error: { code: 'NotFound', managerCode: 'InvalidData', message },
        meta: expect.anything(),
      });
    }
    const v1 = await fetch(`${c.stack.edgeUrl}/api/PF4/${c.stack.platforms.pf4}/TradeTransaction`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tradeTransactionType: 'CloseMarket', order, orderBy: other, volume: 10 }),
    });
    expect(v1.status).toBe(404);
    expect(await v1.json()).toEqual({ errorType: 'PF4API', errorCode: 'InvalidData', errorDescription: message });
    // Nothing reached the trade: whole, its stops as opened, on the gateway's live read and on the server.
    expect(await liveTrade(order)).toMatchObject({ order, login: owner, volume: 20, sl: opened.sl });
    expect(await sim.ok<Row>('TradeRecordRequest', { order })).toMatchObject({ login: owner, volume: 20 });
    expect(await ok<Row[]>(c, 'v2.PF4.TradesGetByLogin', { params: { login: other, group: 'demo\\forex' } })).toEqual(
      [],
    );
    // Its own login closes it.
    expect(await transaction({ tradeTransactionType: 'CloseMarket', order, orderBy: owner, volume: 20 })).toMatchObject(
      { order, orderBy: owner, volume: 20 },
    );
    expect(await liveTrade(order)).toBeNull();
  });

  it('refuses a command of another kind than the name says, and runs nothing', async () => {
    const login = await newAccount('reference refused');
    await transaction({ tradeTransactionType: 'BalanceAdd', orderBy: login, price: 10_000 });
    const refused = await send('POST', 'TradeTransaction', {
      tradeTransactionType: 'OpenMarket',
      tradeCommand: 'BuyLimit',
      orderBy: login,
      symbol: SYMBOL,
      volume: 10,
      price: 1,
    });
    expect(refused.error).toMatchObject({
      code: 'Validation',
      message: 'body.tradeCommand: tradeCommand must be Buy or Sell for OpenMarket',
    });
    const credit = await send('POST', 'TradeTransaction', {
      tradeTransactionType: 'CreditAdd',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 5,
    });
    expect(credit.error).toMatchObject({
      code: 'Validation',
      message: 'body.tradeCommand: tradeCommand must be Credit for CreditAdd',
    });
    expect(await ok<Row[]>(c, 'v2.PF4.TradesGetByLogin', { params: { login, group: 'demo\\forex' } })).toEqual([]);
    expect(await account(login)).toMatchObject({ balance: 10_000, credit: 0 });
  });
});

describe('v1.PF4.TradeTransaction in the reference vocabulary', () => {
  it('takes the same names: BalanceAdd and OpenMarket run as on v2, answered as the executed transaction', async () => {
    const login = await newAccount('reference v1');
    const v1 = async (body: Row): Promise<Row> => {
      const res = await fetch(`${c.stack.edgeUrl}/api/PF4/${c.stack.platforms.pf4}/TradeTransaction`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(200);
      return (await res.json()) as Row;
    };
    expect(await v1({ tradeTransactionType: 'BalanceAdd', orderBy: login, price: 3_000 })).toMatchObject({
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      price: 3_000,
    });
    const opened = await v1({
      tradeTransactionType: 'OpenMarket',
      tradeCommand: 'Sell',
      orderBy: login,
      symbol: SYMBOL,
      volume: 1,
    });
    expect(opened).toMatchObject({
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Sell',
      orderBy: login,
      volume: 1,
    });
    expect(await liveTrade(opened.order as number)).toMatchObject({ login, tradeCommand: 'Sell', volume: 1 });
    expect(await account(login)).toMatchObject({ balance: 3_000 });
  });
});

describe('what such a client sends to the smaller operations', () => {
  it('ExternalCommandJSON without a body passes the command null to the plugin', async () => {
    const res = await fetch(`${c.stack.edgeUrl}/api/v2/PF4/${c.stack.platforms.pf4}/ExternalCommandJSON`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ data: { plugin: 'Echo', received: null }, error: null });
    // A body that is not JSON is still refused.
    const res2 = await fetch(`${c.stack.edgeUrl}/api/v2/PF4/${c.stack.platforms.pf4}/ExternalCommandJSON`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
      body: '{"command": ',
    });
    expect(((await res2.json()) as Envelope).error).toMatchObject({
      code: 'Validation',
      message: 'body: must be well-formed JSON',
    });
  });

  it('BackupRequestUsers and BackupRequestOrders with an empty request= answer every record of the file', async () => {
    const [{ file }] = await ok<Row[]>(c, 'v2.PF4.BackupInfoUsers', { params: { mode: 0 } });
    const users = await send<Row[]>('GET', `BackupRequestUsers/${encodeURIComponent(file)}?request=&limit=10000`);
    expect(users.error).toBeNull();
    expect(users.data!.map((u) => u.login)).toEqual(
      (await sim.ok<Row[]>('BackupRequestUsers', { file })).map((u) => u.login),
    );
    expect(users.data!.length).toBeGreaterThan(0);
    const orders = await send<Row[]>('GET', `BackupRequestOrders/${encodeURIComponent(file)}?request=&limit=10000`);
    expect(orders.error).toBeNull();
    expect(orders.data!.map((t) => t.order)).toEqual(
      (await sim.ok<Row[]>('BackupRequestOrders', { file })).map((t) => t.order),
    );
  });

  it('UsersGroupOp Delete with leverage 0 deletes the accounts; Leverage with 0 is still refused', async () => {
    const [a, b] = [await newAccount('reference delete a'), await newAccount('reference delete b')];
    const leverage = (await sim.ok<Row>('UserRecordRequest', { login: b })).leverage as number;
    const noLeverage = await send('POST', 'UsersGroupOp', {
      command: 'Leverage',
      newGroup: null,
      leverage: 0,
      logins: [b],
    });
    expect(noLeverage.error).toMatchObject({
      code: 'Validation',
      message: 'body.leverage: leverage must be at least 1',
    });
    const enable = await send('POST', 'UsersGroupOp', { command: 'Enable', newGroup: null, leverage: 0, logins: [b] });
    expect(enable).toMatchObject({ data: true, error: null });
    expect(await sim.ok<Row>('UserRecordRequest', { login: b })).toMatchObject({ leverage, enableFlags: 1 });

    const deleted = await send('POST', 'UsersGroupOp', {
      command: 'Delete',
      newGroup: null,
      leverage: 0,
      logins: [a, b],
    });
    expect(deleted).toMatchObject({ data: true, error: null });
    for (const login of [a, b]) expect((await sim.fails('UserRecordRequest', { login })).message).toMatch(/not found/);
    expect(
      await eventually(
        async () =>
          (await call(c, 'v2.PF4.UserRecordRequest', { params: { login: a } })).body.error?.code === 'NotFound',
      ),
    ).toBe(true);
  });
});
