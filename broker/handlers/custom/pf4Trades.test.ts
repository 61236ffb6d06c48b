import { describe, expect, it } from 'vitest';
import { trades } from '../../../shared/catalog/v2/pf4/index.js';
import { TRANSACTION_TYPES } from '../../../shared/catalog/v2/pf4/trades.js';
import { OperationError } from '../../../shared/errors.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { EPOCH } from '../../../shared/records/shape.js';
import type { Operation } from '../../../shared/catalog/index.js';
import type { PumpCache } from '../../cache/pumpCache.js';
import { ConnectionLostError } from '../../session/managerErrors.js';
import { BAD_CURSOR, encodeCursor } from '../paging.js';
import { pf4TradesBindings } from './pf4Trades.js';
import {
  cacheOf,
  call,
  expectOperationError,
  failureOf,
  platformOf,
  rowsOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

/** A PF4Trade as the contract has it: every field, in order, the missing ones empty. */
const trade = (order: number, login: number, fields: Record<string, unknown> = {}) => ({
  order,
  login,
  symbol: null,
  digits: 0,
  tradeCommand: 'Buy',
  volume: 0,
  volumeLots: 0,
  tradeRecordState: 'OpenNormal',
  openPrice: 0,
  sl: 0,
  tp: 0,
  openTime: EPOCH,
  closeTime: EPOCH,
  closePrice: 0,
  commission: 0,
  commissionAgent: 0,
  storage: 0,
  profit: 0,
  taxes: 0,
  magic: 0,
  comment: null,
  expiration: EPOCH,
  tradeRecordReason: 'Client',
  activationType: 'None',
  timeStamp: EPOCH,
  marginRate: 0,
  ...fields,
});

/** A PF4TradeTransaction as the contract has it. */
const transaction = (fields: Record<string, unknown>) => ({
  tradeTransactionType: null,
  tradeCommand: null,
  tradeRequestFlags: null,
  expiration: EPOCH,
  order: 0,
  orderBy: 0,
  symbol: null,
  volume: 0,
  price: 0,
  sl: 0,
  tp: 0,
  ieDeviation: 0,
  comment: null,
  crc: 0,
  ...fields,
});

const live = (entry: Operation, session: ScriptedSession, args: Record<string, unknown>) =>
  call(pf4TradesBindings, entry, platformOf('PF4', { session }), args);

describe('TradesGetByLogin', () => {
  const cache = cacheOf('PF4', {
    users: [
      { login: 7, group: 'demo' },
      { login: 8, group: 'demo' },
      { login: 9, group: 'real' },
    ],
    trades: [
      { order: 30, login: 7, volume: 3 },
      { order: 10, login: 7, volume: 1 },
      { order: 20, login: 8 },
      { order: 5, login: 9 },
    ],
  });
  const byLogin = (on: PumpCache, login: number, group: string) =>
    call(pf4TradesBindings, trades.TradesGetByLogin, platformOf(on.family, { cache: on }), { login, group });

  it("answers the account's open trades by ticket when the account is in the group", () => {
    const result = byLogin(cache, 7, 'demo') as { json: string };
    expect(rowsOf(result)).toEqual([trade(10, 7, { volume: 1 }), trade(30, 7, { volume: 3 })]);
    expect(rowsOf(byLogin(cache, 8, 'demo') as { json: string })).toEqual([trade(20, 8)]);
  });

  it('answers an empty list for an account without trades', () => {
    const empty = cacheOf('PF4', { users: [{ login: 7, group: 'demo' }] });
    expect(byLogin(empty, 7, 'demo')).toEqual({ json: '[]' });
  });

  it('answers an empty list where the cache keeps no trades', () => {
    const pf5 = cacheOf('PF5', { users: [{ login: 7, group: 'demo' }] });
    expect(byLogin(pf5, 7, 'demo')).toEqual({ json: '[]' });
  });

  it('is not found for an unknown login', async () => {
    await expectOperationError(() => byLogin(cache, 6, 'demo'), {
      code: 'NotFound',
      message: 'login 6 not found',
      managerCode: 3,
    });
  });

  it('is not found for an account of another group, the group compared case-sensitively', async () => {
    await expectOperationError(() => byLogin(cache, 9, 'demo'), {
      code: 'NotFound',
      message: 'login 9 is not in group demo',
      managerCode: 3,
    });
    await expectOperationError(() => byLogin(cache, 7, 'Demo'), {
      code: 'NotFound',
      message: 'login 7 is not in group Demo',
      managerCode: 3,
    });
  });
});

describe('TradeCheckStops', () => {
  const body = { tradeCommand: 'Buy', symbol: 'EURUSD', volume: 100, orderBy: 7, sl: 1.05, tp: 1.2 };
  const check = (session: ScriptedSession, price?: number) =>
    live(trades.TradeCheckStops, session, price === undefined ? { body } : { body, price });

  it('sends the transaction as the record, without a price when none is given', async () => {
    const session = new ScriptedSession().answers('TradeCheckStops', true);
    expect(await check(session)).toEqual({ data: true });
    expect(session.sent).toEqual([sent('TradeCheckStops', { record: body })]);
    expect(Object.keys(session.sent[0].args!)).toEqual(['record']);
  });

  it('sends the reference price when given, 0 included', async () => {
    for (const price of [1.1234, 0]) {
      const session = new ScriptedSession().answers('TradeCheckStops', true);
      await check(session, price);
      expect(session.sent).toEqual([sent('TradeCheckStops', { record: body, price })]);
    }
  });

  it('answers true only for an answer of exactly true', async () => {
    for (const answer of [false, 1, 'true', null, undefined, {}]) {
      expect(await check(new ScriptedSession().answers('TradeCheckStops', answer)), JSON.stringify(answer)).toEqual({
        data: false,
      });
    }
  });

  it('answers a stops verdict as data false beside the refusal', async () => {
    for (const code of [PF4_RESULT.TradeBadPrices, PF4_RESULT.TradeBadStops, PF4_RESULT.TradeExpirationDenied]) {
      const refusal = new OperationError('PF4Error', `refused ${code}`, code);
      const error = await expectOperationError(() => check(new ScriptedSession().fails('TradeCheckStops', refusal)), {
        code: 'PF4Error',
        message: `refused ${code}`,
        managerCode: code,
        data: false,
      });
      expect(error).not.toBe(refusal);
    }
  });

  it('lets every other failure through as it is', async () => {
    const failures = [
      new OperationError('PF4Error', 'bad volume', PF4_RESULT.TradeBadVolume),
      new OperationError('PF4Error', 'invalid data', PF4_RESULT.InvalidData),
      new OperationError('PF4Error', 'no code'),
      new OperationError('NotFound', 'bad prices but not found', PF4_RESULT.TradeBadPrices),
      new OperationError('PF5Error', 'other family', PF4_RESULT.TradeBadStops),
      new ConnectionLostError('connection lost'),
      new Error('not an operation error'),
    ];
    for (const failure of failures) {
      expect(await failureOf(() => check(new ScriptedSession().fails('TradeCheckStops', failure)))).toBe(failure);
    }
  });
});

describe('TradeTransaction', () => {
  const transact = (session: ScriptedSession, body: Record<string, unknown>) =>
    live(trades.TradeTransaction, session, { body });

  it("sends the transaction's members at the top level and answers the transaction as the server executed it", async () => {
    const body = {
      tradeTransactionType: 'OrderOpen',
      tradeCommand: 'Buy',
      tradeRequestFlags: 'Hedge',
      symbol: 'EURUSD',
      volume: 100,
      orderBy: 7,
      price: 1.1,
      ieDeviation: 3,
      crc: 99,
      comment: 'asked',
    };
    const record = {
      order: 501,
      login: 7,
      tradeCommand: 'Buy',
      symbol: 'EURUSD',
      volume: 100,
      openPrice: 1.1002,
      closePrice: 0,
      profit: 0,
      sl: 1.05,
      tp: 1.2,
      expiration: '2024-02-01T00:00:00Z',
      comment: 'done',
      magic: 12,
    };
    const session = new ScriptedSession().answers('TradeTransaction', record);
    expect(await transact(session, body)).toEqual({
      data: transaction({
        tradeTransactionType: 'OrderOpen',
        tradeCommand: 'Buy',
        tradeRequestFlags: 'Hedge',
        expiration: '2024-02-01T00:00:00Z',
        order: 501,
        orderBy: 7,
        symbol: 'EURUSD',
        volume: 100,
        price: 1.1002,
        sl: 1.05,
        tp: 1.2,
        ieDeviation: 3,
        comment: 'done',
        crc: 99,
      }),
    });
    expect(session.sent).toEqual([sent('TradeTransaction', body)]);
  });

  it('answers the open price, the close price or the amount as the executed price, by transaction type', async () => {
    const expected: Record<(typeof TRANSACTION_TYPES)[number], number> = {
      BrOrderOpen: 1.5,
      OrderOpen: 1.5,
      OrderImOpen: 1.5,
      OrderMkOpen: 1.5,
      OrderReqOpen: 1.5,
      OrderPendingOpen: 1.5,
      BrOrderClose: 2.5,
      OrderClose: 2.5,
      OrderImClose: 2.5,
      OrderMkClose: 2.5,
      OrderReqClose: 2.5,
      BrOrderModify: 1.5,
      OrderModify: 1.5,
      BrOrderDelete: 2.5,
      OrderDelete: 2.5,
      BrOrderActivate: 1.5,
      BrBalance: 3.5,
    };
    expect(Object.keys(expected).sort()).toEqual([...TRANSACTION_TYPES].sort());
    for (const [type, price] of Object.entries(expected)) {
      const session = new ScriptedSession().answers('TradeTransaction', {
        order: 9,
        login: 7,
        openPrice: 1.5,
        closePrice: 2.5,
        profit: 3.5,
      });
      const { data } = await transact(session, { tradeTransactionType: type, order: 9, price: 0.5 });
      expect((data as { price: number }).price, type).toBe(price);
    }
  });

  it('takes the command from the record, else from the request, else none; the account from the record', async () => {
    const fromRequest = new ScriptedSession().answers('TradeTransaction', { order: 3, login: 8 });
    expect(
      await transact(fromRequest, { tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: 7, price: 10 }),
    ).toEqual({
      data: transaction({ tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', order: 3, orderBy: 8 }),
    });
    const fromRecord = new ScriptedSession().answers('TradeTransaction', {
      order: 3,
      login: 7,
      tradeCommand: 'Balance',
      profit: 10,
    });
    expect(
      await transact(fromRecord, { tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: 7, price: 10 }),
    ).toEqual({
      data: transaction({
        tradeTransactionType: 'BrBalance',
        tradeCommand: 'Balance',
        order: 3,
        orderBy: 7,
        price: 10,
      }),
    });
    const none = new ScriptedSession().answers('TradeTransaction', { order: 4 });
    expect(await transact(none, { tradeTransactionType: 'OrderClose', order: 4 })).toEqual({
      data: transaction({ tradeTransactionType: 'OrderClose', order: 4 }),
    });
  });

  it('reads the ticket first for a reference name acting on one, and refuses another kind of order sending nothing', async () => {
    const ticketKind = { name: 'DeletePending', commands: ['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'] };
    const market = new ScriptedSession().answers('TradeRecordRequest', { order: 9, tradeCommand: 'Buy' });
    await expectOperationError(
      () => transact(market, { tradeTransactionType: 'BrOrderDelete', order: 9, ticketKind }),
      {
        code: 'Validation',
        message:
          'body.order: order 9 is a Buy trade; DeletePending acts only on BuyLimit, SellLimit, BuyStop, SellStop orders',
      },
    );
    expect(market.sent).toEqual([sent('TradeRecordRequest', { order: 9 })]);

    const pending = new ScriptedSession()
      .answers('TradeRecordRequest', { order: 9, tradeCommand: 'SellStop' })
      .answers('TradeTransaction', { order: 9, login: 7, tradeCommand: 'SellStop', closePrice: 1.25 });
    expect(await transact(pending, { tradeTransactionType: 'BrOrderDelete', order: 9, ticketKind })).toEqual({
      data: transaction({
        tradeTransactionType: 'BrOrderDelete',
        tradeCommand: 'SellStop',
        order: 9,
        orderBy: 7,
        price: 1.25,
      }),
    });
    // The member is the gateway's own: the server gets the platform's transaction only.
    expect(pending.sent).toEqual([
      sent('TradeRecordRequest', { order: 9 }),
      sent('TradeTransaction', { tradeTransactionType: 'BrOrderDelete', order: 9 }),
    ]);
  });

  it("refuses a transaction on a ticket whose orderBy is not the ticket's login, sending nothing; the right login runs", async () => {
    const closeMarket = { name: 'CloseMarket', commands: ['Buy', 'Sell'] };
    const refusal = {
      code: 'NotFound' as const,
      managerCode: PF4_RESULT.InvalidData,
      message:
        "body.orderBy: order 9 is not a trade of login 8 (it is login 7's); orderBy must be the ticket's login, or absent",
    };
    // A reference name, which reads the ticket for its kind, and the platform's own names acting on a ticket alike.
    for (const body of [
      { tradeTransactionType: 'BrOrderClose', order: 9, orderBy: 8, volume: 5, ticketKind: closeMarket },
      { tradeTransactionType: 'BrOrderClose', order: 9, orderBy: 8, volume: 5 },
      { tradeTransactionType: 'BrOrderModify', order: 9, orderBy: 8, sl: 1 },
      { tradeTransactionType: 'OrderDelete', order: 9, orderBy: 8 },
      { tradeTransactionType: 'BrOrderActivate', order: 9, orderBy: 8 },
    ]) {
      const session = new ScriptedSession().answers('TradeRecordRequest', { order: 9, login: 7, tradeCommand: 'Buy' });
      await expectOperationError(() => transact(session, body), refusal);
      expect(session.sent, body.tradeTransactionType).toEqual([sent('TradeRecordRequest', { order: 9 })]);
    }
    const right = new ScriptedSession()
      .answers('TradeRecordRequest', { order: 9, login: 7, tradeCommand: 'Buy' })
      .answers('TradeTransaction', { order: 9, login: 7, tradeCommand: 'Buy', volume: 5, closePrice: 1.25 });
    expect(await transact(right, { tradeTransactionType: 'BrOrderClose', order: 9, orderBy: 7, volume: 5 })).toEqual({
      data: transaction({
        tradeTransactionType: 'BrOrderClose',
        tradeCommand: 'Buy',
        order: 9,
        orderBy: 7,
        volume: 5,
        price: 1.25,
      }),
    });
    expect(right.sent).toEqual([
      sent('TradeRecordRequest', { order: 9 }),
      sent('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: 9, orderBy: 7, volume: 5 }),
    ]);
    // Without orderBy the platform's own name is sent as it is, unread; an opening's orderBy is the account it opens for.
    const unread = new ScriptedSession().answers('TradeTransaction', { order: 9, login: 7 });
    await transact(unread, { tradeTransactionType: 'OrderClose', order: 9 });
    expect(unread.sent.map((s) => s.command)).toEqual(['TradeTransaction']);
    const open = new ScriptedSession().answers('TradeTransaction', { order: 10, login: 8 });
    await transact(open, {
      tradeTransactionType: 'BrOrderOpen',
      tradeCommand: 'Buy',
      orderBy: 8,
      symbol: 'EURUSD',
      volume: 5,
    });
    expect(open.sent.map((s) => s.command)).toEqual(['TradeTransaction']);
  });

  it('refuses an answer that is not a trade record', async () => {
    for (const answer of [null, undefined, 0, false, '', 'done', 501, true]) {
      await expectOperationError(
        () =>
          transact(new ScriptedSession().answers('TradeTransaction', answer), {
            tradeTransactionType: 'OrderClose',
            order: 4,
          }),
        {
          code: 'Internal',
          message: 'the trading server answered the transaction without a trade record',
        },
      );
    }
  });

  it('fails as the session failed', async () => {
    const refused = new OperationError('PF4Error', 'no money', PF4_RESULT.TradeNoMoney);
    expect(
      await failureOf(() =>
        transact(new ScriptedSession().fails('TradeTransaction', refused), {
          tradeTransactionType: 'OrderClose',
          order: 4,
        }),
      ),
    ).toBe(refused);
  });
});

describe('AdmTradeRecordModify', () => {
  const modify = (session: ScriptedSession, ticket: number, body: Record<string, unknown>) =>
    live(trades.AdmTradeRecordModify, session, { ticket, body });

  it('sends the ticket and the edit as a keyed read and answers the trade', async () => {
    const body = { sl: 1.05, comment: 'fixed' };
    const session = new ScriptedSession().answers('AdmTradeRecordModify', {
      order: 7,
      login: 3,
      sl: 1.05,
      comment: 'fixed',
      secret: 'x',
    });
    expect(await modify(session, 7, body)).toEqual({ data: trade(7, 3, { sl: 1.05, comment: 'fixed' }) });
    expect(session.sent).toEqual([sent('AdmTradeRecordModify', { ticket: 7, record: body }, { keyedRead: true })]);
  });

  it("accepts the path's own ticket in the body", async () => {
    const session = new ScriptedSession().answers('AdmTradeRecordModify', { order: 7, login: 3 });
    expect(await modify(session, 7, { order: 7, tp: 2 })).toEqual({ data: trade(7, 3) });
    expect(session.sent).toEqual([
      sent('AdmTradeRecordModify', { ticket: 7, record: { order: 7, tp: 2 } }, { keyedRead: true }),
    ]);
  });

  it('refuses another ticket in the body, sending nothing', async () => {
    const session = new ScriptedSession();
    await expectOperationError(() => modify(session, 7, { order: 8, tp: 2 }), {
      code: 'Validation',
      message: 'body.order: must be the ticket of the path (7) or absent',
    });
    expect(session.sent).toEqual([]);
  });

  it('fails as the session failed', async () => {
    const unknown = new OperationError('NotFound', 'invalid data', PF4_RESULT.InvalidData);
    expect(
      await failureOf(() => modify(new ScriptedSession().fails('AdmTradeRecordModify', unknown), 7, { tp: 2 })),
    ).toBe(unknown);
  });
});

describe('TradesRequest without a group', () => {
  const request = (session: ScriptedSession, args: Record<string, unknown> = {}) =>
    live(trades.TradesRequest, session, args);

  it("sends no paging without limit or cursor, and answers the server's page shaped", async () => {
    const session = new ScriptedSession().answers('TradesRequest', {
      items: [
        { order: 1, login: 7 },
        { order: 2, login: 8, extra: 1 },
      ],
      hasMore: false,
    });
    expect(await request(session)).toEqual({
      data: [trade(1, 7), trade(2, 8)],
      paging: { nextCursor: null, hasMore: false },
    });
    expect(session.sent).toEqual([sent('TradesRequest', {})]);
  });

  it('asks one more than the limit after the cursor, and cuts it off as the sign of a next page', async () => {
    const session = new ScriptedSession().answers('TradesRequest', {
      items: [{ order: 11 }, { order: 12 }, { order: 13 }],
      hasMore: false,
    });
    expect(await request(session, { limit: 2, cursor: encodeCursor(10) })).toEqual({
      data: [trade(11, 0), trade(12, 0)],
      paging: { nextCursor: encodeCursor(12), hasMore: true },
    });
    expect(session.sent).toEqual([sent('TradesRequest', { after: 10, limit: 3 })]);
  });

  it('answers a full page as the last unless the server says more follow', async () => {
    const last = new ScriptedSession().answers('TradesRequest', {
      items: [{ order: 11 }, { order: 12 }],
      hasMore: false,
    });
    expect((await request(last, { limit: 2 })).paging).toEqual({ nextCursor: null, hasMore: false });
    expect(last.sent).toEqual([sent('TradesRequest', { limit: 3 })]);
    const more = new ScriptedSession().answers('TradesRequest', {
      items: [{ order: 11 }, { order: 12 }],
      hasMore: true,
    });
    expect((await request(more, { limit: 2 })).paging).toEqual({ nextCursor: encodeCursor(12), hasMore: true });
    const unlimited = new ScriptedSession().answers('TradesRequest', { items: [{ order: 11 }], hasMore: true });
    expect((await request(unlimited, { cursor: encodeCursor(3) })).paging).toEqual({
      nextCursor: encodeCursor(11),
      hasMore: true,
    });
    expect(unlimited.sent).toEqual([sent('TradesRequest', { after: 3 })]);
  });

  it('reads anything but hasMore true as the last page, and a missing list as empty', async () => {
    for (const answer of [
      { items: [{ order: 1 }], hasMore: 'true' },
      { items: [{ order: 1 }], hasMore: 1 },
      { items: [{ order: 1 }] },
    ]) {
      expect((await request(new ScriptedSession().answers('TradesRequest', answer))).paging).toEqual({
        nextCursor: null,
        hasMore: false,
      });
    }
    for (const answer of [null, undefined, {}, { hasMore: false }]) {
      expect(await request(new ScriptedSession().answers('TradesRequest', answer))).toEqual({
        data: [],
        paging: { nextCursor: null, hasMore: false },
      });
    }
  });

  it('refuses a cursor that is not a ticket, sending nothing', async () => {
    for (const cursor of [encodeCursor(-1), encodeCursor('12'), encodeCursor(1.5), '***']) {
      const session = new ScriptedSession();
      await expectOperationError(() => request(session, { cursor }), { code: 'Validation', message: BAD_CURSOR });
      expect(session.sent).toEqual([]);
    }
  });
});

describe('TradesRequest with a group', () => {
  const request = (session: ScriptedSession, args: Record<string, unknown>) =>
    live(trades.TradesRequest, session, { group: 'vip', ...args });
  const chunk = (...rows: Array<[order: number, login: number]>) => rows.map(([order, login]) => ({ order, login }));
  const users = (...rows: Array<[login: number, group: string]>) => rows.map(([login, group]) => ({ login, group }));

  it("checks the group, reads the trades in chunks and keeps those of the group's accounts, by ticket", async () => {
    const session = new ScriptedSession()
      .answers('GroupRecordRequest', { group: 'vip' })
      .answers('TradesRequest', { items: chunk([1, 7], [2, 8], [3, 7], [4, 9]), hasMore: false })
      .answers('UserRecordsRequest', users([7, 'vip'], [8, 'demo'], [9, 'VIP']));
    expect(await request(session, {})).toEqual({
      data: [trade(1, 7), trade(3, 7)],
      paging: { nextCursor: null, hasMore: false },
    });
    expect(session.sent).toEqual([
      sent('GroupRecordRequest', { group: 'vip' }, { keyedRead: true }),
      sent('TradesRequest', { limit: 2000 }),
      sent('UserRecordsRequest', { logins: [7, 8, 9] }),
    ]);
  });

  it('reads chunk after chunk from the cursor until one more than the page is kept', async () => {
    const session = new ScriptedSession()
      .answers('GroupRecordRequest', { group: 'vip' })
      .answers('TradesRequest', { items: chunk([101, 7], [102, 8]), hasMore: true })
      .answers('UserRecordsRequest', users([7, 'vip'], [8, 'demo']))
      .answers('TradesRequest', { items: chunk([103, 8], [104, 7], [105, 6], [106, 7]), hasMore: true })
      .answers('UserRecordsRequest', users([8, 'demo'], [7, 'vip'], [6, 'vip']));
    expect(await request(session, { limit: 2, cursor: encodeCursor(100) })).toEqual({
      data: [trade(101, 7), trade(104, 7)],
      paging: { nextCursor: encodeCursor(104), hasMore: true },
    });
    expect(session.sent).toEqual([
      sent('GroupRecordRequest', { group: 'vip' }, { keyedRead: true }),
      sent('TradesRequest', { after: 100, limit: 2000 }),
      sent('UserRecordsRequest', { logins: [7, 8] }),
      sent('TradesRequest', { after: 102, limit: 2000 }),
      sent('UserRecordsRequest', { logins: [8, 7, 6] }),
    ]);
  });

  it('answers a page that is exactly full as the last when the trades end', async () => {
    const session = new ScriptedSession()
      .answers('GroupRecordRequest', { group: 'vip' })
      .answers('TradesRequest', { items: chunk([1, 7], [2, 8]), hasMore: true })
      .answers('UserRecordsRequest', users([7, 'vip'], [8, 'vip']))
      .answers('TradesRequest', { items: chunk([3, 9]), hasMore: false })
      .answers('UserRecordsRequest', users([9, 'demo']));
    expect(await request(session, { limit: 2 })).toEqual({
      data: [trade(1, 7), trade(2, 8)],
      paging: { nextCursor: null, hasMore: false },
    });
    expect(session.unused).toBe(0);
  });

  it('stops at an empty chunk or a missing answer even when the server says more follow', async () => {
    for (const answer of [{ items: [], hasMore: true }, null, { hasMore: true }]) {
      const session = new ScriptedSession()
        .answers('GroupRecordRequest', { group: 'vip' })
        .answers('TradesRequest', answer);
      expect(await request(session, { limit: 5 })).toEqual({ data: [], paging: { nextCursor: null, hasMore: false } });
      expect(session.sent.map((s) => s.command)).toEqual(['GroupRecordRequest', 'TradesRequest']);
    }
  });

  it('keeps nothing of a chunk whose accounts the server did not list', async () => {
    for (const answer of [null, { login: 7, group: 'vip' }, []]) {
      const session = new ScriptedSession()
        .answers('GroupRecordRequest', { group: 'vip' })
        .answers('TradesRequest', { items: chunk([1, 7]), hasMore: false })
        .answers('UserRecordsRequest', answer);
      expect(await request(session, {})).toEqual({ data: [], paging: { nextCursor: null, hasMore: false } });
    }
  });

  it('fails as the group check failed, reading no trades', async () => {
    const unknown = new OperationError('NotFound', 'invalid data', PF4_RESULT.InvalidData);
    const session = new ScriptedSession().fails('GroupRecordRequest', unknown);
    expect(await failureOf(() => request(session, {}))).toBe(unknown);
    expect(session.sent.map((s) => s.command)).toEqual(['GroupRecordRequest']);
  });
});
