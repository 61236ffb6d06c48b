/**
 * The input rules of the v2 PF4 Trades entries (shared/catalog/v2/pf4/trades.ts), as the edge applies them in
 * validateInputs: each refusal with its exact message, the bounds on both sides, the exact arguments a handler
 * receives, and what each entry declares about itself (method, time-out class, scope, paging, how it is answered).
 */
import { describe, expect, it } from 'vitest';
import { type CachedList, type Live, type Operation } from '../../index.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';
import { ownTransactionType, TRANSACTION_ALIASES, TRANSACTION_TYPE_NAMES, TRANSACTION_TYPES } from './trades.js';
import { buildOpenApiDocument } from '../../../../workers/openapi/document.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');
const withBody = (name: string, value: unknown, params: Record<string, string> = {}, query = '') =>
  call(name, params, query, json(value));

const declared = (e: Operation) => ({
  method: e.method,
  path: e.path,
  tag: e.tag,
  response: e.response,
  timeout: e.timeout,
  read: e.read,
  mutating: e.mutating,
  destructive: e.destructive,
  scope: e.scope,
  paged: e.paged,
  answer: JSON.parse(JSON.stringify(e.answer)) as unknown,
});
const text = (n: number, c = 'a') => c.repeat(n);

const OPEN = ['BrOrderOpen', 'OrderOpen', 'OrderImOpen', 'OrderMkOpen', 'OrderReqOpen', 'OrderPendingOpen'];
const BY_TICKET = [
  'BrOrderClose',
  'OrderClose',
  'OrderImClose',
  'OrderMkClose',
  'OrderReqClose',
  'BrOrderModify',
  'OrderModify',
  'BrOrderDelete',
  'OrderDelete',
  'BrOrderActivate',
];
const REFERENCE = [
  'OpenMarket',
  'OpenPending',
  'CloseMarket',
  'ModifyTrade',
  'ModifyPending',
  'DeletePending',
  'ActivatePending',
  'BalanceAdd',
  'CreditAdd',
];
const TYPES_MESSAGE = `body.tradeTransactionType: tradeTransactionType must be one of ${[...OPEN.slice(0, 6), ...BY_TICKET.slice(0, 5), 'BrOrderModify', 'OrderModify', 'BrOrderDelete', 'OrderDelete', 'BrOrderActivate', 'BrBalance', ...REFERENCE].join(', ')}`;
const ORDER_COMMANDS_MESSAGE =
  'body.tradeCommand: tradeCommand must be one of Buy, Sell, BuyLimit, SellLimit, BuyStop, SellStop';

describe('v2 PF4 trades: what each entry declares', () => {
  const base = { tag: 'Trades', destructive: false, paged: undefined };
  const reading = { ...base, method: 'GET', mutating: false, scope: 'webapi' };
  const trading = { ...base, method: 'POST', read: 'live', mutating: true, scope: 'webapi.write' };

  it('declares the cached reads with their table, key and order', () => {
    expect(declared(entry('TradesGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesGet',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'cached',
      paged: { key: 'order' },
      answer: { kind: 'cachedList', table: 'trades' },
    });
    expect(declared(entry('TradesGetTicket'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesGet/{ticket}',
      response: 'PF4Trade',
      timeout: 'read',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'trades', key: 'ticket', what: 'open trade' },
    });
    expect(declared(entry('TradesGetByLogin'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesGetByLogin/{login}/{group}',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'cached',
      answer: { kind: 'custom' },
    });
    expect(declared(entry('TradesGetBySymbol'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesGetBySymbol',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'cached',
      answer: { kind: 'cachedList', table: 'trades', index: { name: 'symbol', arg: 'symbol' } },
    });
    expect(declared(entry('TradesGetByMarket'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesGetByMarket',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'cached',
      answer: { kind: 'cachedList', table: 'trades' },
    });
    expect(declared(entry('TradeRecordGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradeRecordGet/{order}',
      response: 'PF4Trade',
      timeout: 'read',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'trades', orIn: ['closedTrades'], key: 'order', what: 'order' },
    });
  });

  it('declares the live reads with their command and time-out class', () => {
    expect(declared(entry('TradeRecordRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradeRecordRequest/{order}',
      response: 'PF4Trade',
      timeout: 'read',
      read: 'live',
      answer: { kind: 'live', command: 'TradeRecordRequest', keyedRead: true },
    });
    expect(declared(entry('TradesRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradesRequest',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'live',
      paged: { key: 'order' },
      answer: { kind: 'custom' },
    });
    expect(declared(entry('TradeRecordsRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/TradeRecordsRequest',
      response: 'PF4Trade[]',
      timeout: 'read',
      read: 'live',
      answer: { kind: 'live', command: 'TradeRecordsRequest' },
    });
    expect(declared(entry('AdmTradesRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/AdmTradesRequest/{group}',
      response: 'PF4Trade[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'AdmTradesRequest', keyedRead: true },
    });
  });

  it('declares the stops check read-only despite POST, in the trade time-out class', () => {
    expect(declared(entry('TradeCheckStops'))).toStrictEqual({
      ...reading,
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/TradeCheckStops',
      response: { type: 'boolean' },
      timeout: 'trade',
      read: 'live',
      answer: { kind: 'custom' },
    });
  });

  it('declares the trade changes mutating, with the write scope', () => {
    expect(declared(entry('TradeClearRollback'))).toStrictEqual({
      ...trading,
      path: '/api/v2/PF4/{tradePlatform}/TradeClearRollback/{order}',
      response: { type: 'boolean' },
      timeout: 'trade',
      answer: { kind: 'live', command: 'TradeClearRollback', keyedRead: true },
    });
    expect(declared(entry('AdmTradeRecordModify'))).toStrictEqual({
      ...trading,
      path: '/api/v2/PF4/{tradePlatform}/AdmTradeRecordModify/{ticket}',
      response: 'PF4Trade',
      timeout: 'trade',
      answer: { kind: 'custom' },
    });
    expect(declared(entry('TradeTransaction'))).toStrictEqual({
      ...trading,
      path: '/api/v2/PF4/{tradePlatform}/TradeTransaction',
      response: 'PF4TradeTransaction',
      timeout: 'trade',
      answer: { kind: 'custom' },
    });
    expect(declared(entry('AdmTradesDelete'))).toStrictEqual({
      ...trading,
      path: '/api/v2/PF4/{tradePlatform}/AdmTradesDelete',
      response: { type: 'boolean' },
      timeout: 'trade',
      answer: { kind: 'live', command: 'AdmTradesDelete', keyedRead: true },
    });
    // Its own handler: a start also drops the rows the broker holds back of the session's previous snapshot.
    expect(declared(entry('TradesSyncStart'))).toStrictEqual({
      ...trading,
      path: '/api/v2/PF4/{tradePlatform}/TradesSyncStart',
      response: { type: 'boolean' },
      timeout: 'maintenance',
      answer: { kind: 'custom' },
    });
  });

  it('declares the sync read mutating (it drains the snapshot) and the snapshot a read, both live in the history class', () => {
    const batch = {
      ...base,
      tag: 'Batch reads',
      method: 'GET',
      response: 'PF4Trade[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'custom' },
    };
    expect(declared(entry('TradesSyncRead'))).toStrictEqual({
      ...batch,
      path: '/api/v2/PF4/{tradePlatform}/TradesSyncRead',
      mutating: true,
      scope: 'webapi.write',
    });
    expect(declared(entry('TradesSnapshot'))).toStrictEqual({
      ...batch,
      path: '/api/v2/PF4/{tradePlatform}/TradesSnapshot',
      mutating: false,
      scope: 'webapi',
    });
  });

  it('gives every trades entry a summary sentence', () => {
    for (const name of [
      'TradesGet',
      'TradesGetTicket',
      'TradesGetByLogin',
      'TradesGetBySymbol',
      'TradesGetByMarket',
      'TradeRecordGet',
      'TradeRecordRequest',
      'TradeCheckStops',
      'TradeClearRollback',
      'TradesRequest',
      'AdmTradeRecordModify',
      'TradeTransaction',
      'TradeRecordsRequest',
      'AdmTradesRequest',
      'AdmTradesDelete',
      'TradesSyncStart',
      'TradesSyncRead',
      'TradesSnapshot',
    ]) {
      expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
    }
  });
});

describe('v2 PF4 trades: path and query keys', () => {
  it('takes tickets and orders of 1 to 2147483647 from the path as numbers', () => {
    for (const [name, key] of [
      ['TradesGetTicket', 'ticket'],
      ['TradeRecordGet', 'order'],
      ['TradeRecordRequest', 'order'],
      ['TradeClearRollback', 'order'],
    ]) {
      expect(call(name, { [key]: '1' }, '', none), name).toStrictEqual(accepted({ [key]: 1 }));
      expect(call(name, { [key]: '2147483647' }, '', none), name).toStrictEqual(accepted({ [key]: 2147483647 }));
      expect(call(name, { [key]: '0' }, '', none), name).toStrictEqual(refused(`${key}: ${key} must be at least 1`));
      expect(call(name, { [key]: '2147483648' }, '', none), name).toStrictEqual(
        refused(`${key}: ${key} must be at most 2147483647`),
      );
    }
  });

  it('TradesGetByLogin takes a login and a group of 1 to 16 characters', () => {
    expect(call('TradesGetByLogin', { login: '9', group: 'g' }, '', none)).toStrictEqual(
      accepted({ login: 9, group: 'g' }),
    );
    expect(call('TradesGetByLogin', { login: '9', group: text(16) }, '', none)).toStrictEqual(
      accepted({ login: 9, group: text(16) }),
    );
    expect(call('TradesGetByLogin', { login: '9', group: text(17) }, '', none)).toStrictEqual(
      refused('group: group must be at most 16 characters'),
    );
    expect(call('TradesGetByLogin', { login: '0', group: '' }, '', none)).toStrictEqual(
      refused('login: login must be at least 1; group: group must not be empty'),
    );
  });

  it('TradesGetBySymbol requires a symbol of 1 to 12 characters', () => {
    expect(call('TradesGetBySymbol', {}, `?symbol=${text(12)}`, none)).toStrictEqual(accepted({ symbol: text(12) }));
    expect(call('TradesGetBySymbol', {}, '?symbol=E', none)).toStrictEqual(accepted({ symbol: 'E' }));
    expect(call('TradesGetBySymbol', {}, `?symbol=${text(13)}`, none)).toStrictEqual(
      refused('symbol: symbol must be at most 12 characters'),
    );
    expect(call('TradesGetBySymbol', {}, '?symbol=', none)).toStrictEqual(refused('symbol: symbol must not be empty'));
    expect(call('TradesGetBySymbol', {}, '', none)).toStrictEqual(
      refused('symbol: Invalid input: expected string, received undefined'),
    );
  });

  it('TradesGet pages by limit 1 to 5000 and a cursor', () => {
    expect(call('TradesGet', {}, '?limit=5000&cursor=c', none)).toStrictEqual(accepted({ limit: 5000, cursor: 'c' }));
    expect(call('TradesGet', {}, '?limit=5001', none)).toStrictEqual(refused('limit: limit must be at most 5000'));
  });

  it('TradesRequest pages and takes an optional group of 1 to 16 characters', () => {
    expect(call('TradesRequest', {}, '', none)).toStrictEqual(accepted({}));
    expect(call('TradesRequest', {}, `?limit=1&cursor=c&group=${text(16)}`, none)).toStrictEqual(
      accepted({ limit: 1, cursor: 'c', group: text(16) }),
    );
    expect(call('TradesRequest', {}, `?group=${text(17)}&limit=0`, none)).toStrictEqual(
      refused('limit: limit must be at least 1; group: group must be at most 16 characters'),
    );
    expect(call('TradesRequest', {}, '?group=', none)).toStrictEqual(refused('group: group must not be empty'));
  });

  it('TradeRecordsRequest and AdmTradesDelete take repeated orders as numbers', () => {
    for (const name of ['TradeRecordsRequest', 'AdmTradesDelete']) {
      expect(call(name, {}, '?orders=3&orders=1', none), name).toStrictEqual(accepted({ orders: [3, 1] }));
      expect(call(name, {}, '?orders=0', none), name).toStrictEqual(refused('orders.0: orders must be at least 1'));
      expect(call(name, {}, '', none), name).toStrictEqual(
        refused('orders: Invalid input: expected array, received undefined'),
      );
    }
  });

  it('AdmTradesRequest takes a group and an optional openOnly flag, sending openOnly true when absent', () => {
    expect(call('AdmTradesRequest', { group: 'g' }, '', none)).toStrictEqual(accepted({ group: 'g' }));
    expect(call('AdmTradesRequest', { group: 'g' }, '?openOnly=false', none)).toStrictEqual(
      accepted({ group: 'g', openOnly: false }),
    );
    expect(call('AdmTradesRequest', { group: 'g' }, '?openOnly=no', none)).toStrictEqual(
      refused('openOnly: must be true or false'),
    );
    expect(call('AdmTradesRequest', { group: text(17) }, '', none)).toStrictEqual(
      refused('group: group must be at most 16 characters'),
    );
    const args = (entry('AdmTradesRequest').answer as Live<any>).args!;
    expect(args({ group: 'g' })).toStrictEqual({ group: 'g', openOnly: true });
    expect(args({ group: 'g', openOnly: false })).toStrictEqual({ group: 'g', openOnly: false });
  });

  it('TradesSyncStart requires a timestamp of 0 to 2147483647', () => {
    expect(call('TradesSyncStart', {}, '?timestamp=0', none)).toStrictEqual(accepted({ timestamp: 0 }));
    expect(call('TradesSyncStart', {}, '?timestamp=2147483647', none)).toStrictEqual(
      accepted({ timestamp: 2147483647 }),
    );
    expect(call('TradesSyncStart', {}, '?timestamp=-1', none)).toStrictEqual(
      refused('timestamp: timestamp must be at least 0'),
    );
    expect(call('TradesSyncStart', {}, '', none)).toStrictEqual(
      refused('timestamp: Invalid input: expected string, received undefined'),
    );
  });

  it('TradesSyncRead and TradesSnapshot take a limit of 1 to 100000, 100000 (the contract default) when absent', () => {
    for (const name of ['TradesSyncRead', 'TradesSnapshot']) {
      expect(call(name, {}, '', none), name).toStrictEqual(accepted({ limit: 100000 }));
      expect(call(name, {}, '?limit=1', none), name).toStrictEqual(accepted({ limit: 1 }));
      expect(call(name, {}, '?limit=100000', none), name).toStrictEqual(accepted({ limit: 100000 }));
      expect(call(name, {}, '?limit=0', none), name).toStrictEqual(refused('limit: limit must be at least 1'));
      expect(call(name, {}, '?limit=-5', none), name).toStrictEqual(refused('limit: limit must be at least 1'));
      expect(call(name, {}, '?limit=100001', none), name).toStrictEqual(refused('limit: limit must be at most 100000'));
      expect(call(name, {}, '?limit=1e3', none), name).toStrictEqual(refused('limit: limit must be an integer'));
      expect(call(name, {}, '?limit=7.0', none), name).toStrictEqual(refused('limit: limit must be an integer'));
    }
  });

  it('TradesGetByMarket keeps market trades only (Buy and Sell)', () => {
    const where = (entry('TradesGetByMarket').answer as CachedList<any>).where!;
    expect(
      ['Buy', 'Sell', 'BuyLimit', 'SellStop', 'Balance', undefined].map((tradeCommand) => where({ tradeCommand }, {})),
    ).toStrictEqual([true, true, false, false, false, false]);
  });
});

describe('v2 PF4 trades: TradeTransaction opening types', () => {
  const open = { orderBy: 100, tradeCommand: 'Buy', symbol: 'EURUSD', volume: 10 };

  it('accepts every opening type with an account, a command, a symbol and a volume, passing the body unchanged', () => {
    for (const type of OPEN) {
      expect(withBody('TradeTransaction', { tradeTransactionType: type, ...open }), type).toStrictEqual(
        accepted({ body: { tradeTransactionType: type, ...open } }),
      );
    }
  });

  it('names every missing member of an opening transaction, for every opening type', () => {
    for (const type of OPEN) {
      expect(withBody('TradeTransaction', { tradeTransactionType: type }), type).toStrictEqual(
        refused(
          `body.orderBy: orderBy (the login) is required; ${ORDER_COMMANDS_MESSAGE}; body.symbol: symbol is required; body.volume: volume is required (1/100 lot, at least 1)`,
        ),
      );
    }
  });

  it('accepts each market and pending order command, a pending one with its price', () => {
    for (const tradeCommand of ['Buy', 'Sell']) {
      expect(
        withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, tradeCommand }),
        tradeCommand,
      ).toStrictEqual(accepted({ body: { tradeTransactionType: 'OrderOpen', ...open, tradeCommand } }));
    }
    for (const tradeCommand of ['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop']) {
      expect(
        withBody('TradeTransaction', { tradeTransactionType: 'OrderPendingOpen', ...open, tradeCommand, price: 1.1 }),
        tradeCommand,
      ).toStrictEqual(
        accepted({ body: { tradeTransactionType: 'OrderPendingOpen', ...open, tradeCommand, price: 1.1 } }),
      );
    }
  });

  it('requires the price of each pending order command, not of a market one', () => {
    for (const tradeCommand of ['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop']) {
      expect(
        withBody('TradeTransaction', { tradeTransactionType: 'OrderPendingOpen', ...open, tradeCommand }),
        tradeCommand,
      ).toStrictEqual(refused('body.price: price is required for a pending order'));
    }
    expect(
      withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, tradeCommand: 'Sell' }),
    ).toStrictEqual(accepted({ body: { tradeTransactionType: 'OrderOpen', ...open, tradeCommand: 'Sell' } }));
  });

  it('refuses a balance command, a null command, an empty or null symbol and a zero volume when opening', () => {
    expect(
      withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, tradeCommand: 'Balance' }),
    ).toStrictEqual(refused(ORDER_COMMANDS_MESSAGE));
    expect(
      withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, tradeCommand: null }),
    ).toStrictEqual(refused(ORDER_COMMANDS_MESSAGE));
    expect(withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, symbol: null })).toStrictEqual(
      refused('body.symbol: symbol is required'),
    );
    expect(withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, symbol: '' })).toStrictEqual(
      refused('body.symbol: symbol must not be empty; body.symbol: symbol is required'),
    );
    expect(withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, volume: 0 })).toStrictEqual(
      refused('body.volume: volume is required (1/100 lot, at least 1)'),
    );
    expect(withBody('TradeTransaction', { tradeTransactionType: 'OrderOpen', ...open, volume: 1 })).toStrictEqual(
      accepted({ body: { tradeTransactionType: 'OrderOpen', ...open, volume: 1 } }),
    );
  });
});

describe('v2 PF4 trades: TradeTransaction by ticket and balance', () => {
  it('accepts every close, modify, delete and activate type with a ticket alone', () => {
    for (const type of BY_TICKET) {
      expect(withBody('TradeTransaction', { tradeTransactionType: type, order: 5 }), type).toStrictEqual(
        accepted({ body: { tradeTransactionType: type, order: 5 } }),
      );
    }
  });

  it('requires the ticket of every type that acts on one, naming the type', () => {
    for (const type of BY_TICKET) {
      expect(withBody('TradeTransaction', { tradeTransactionType: type }), type).toStrictEqual(
        refused(`body.order: order (the ticket) is required for ${type}`),
      );
    }
  });

  it('accepts a balance or credit entry for an account with a non-zero amount, negative included', () => {
    for (const tradeCommand of ['Balance', 'Credit']) {
      const body = { tradeTransactionType: 'BrBalance', orderBy: 100, tradeCommand, price: -50 };
      expect(withBody('TradeTransaction', body), tradeCommand).toStrictEqual(accepted({ body }));
    }
  });

  it('names each missing member of a balance entry', () => {
    expect(withBody('TradeTransaction', { tradeTransactionType: 'BrBalance' })).toStrictEqual(
      refused(
        'body.orderBy: orderBy (the login) is required; body.tradeCommand: tradeCommand must be Balance or Credit for BrBalance; ' +
          'body.price: price (the amount) is required and must not be 0',
      ),
    );
    expect(
      withBody('TradeTransaction', { tradeTransactionType: 'BrBalance', orderBy: 100, tradeCommand: 'Buy', price: 0 }),
    ).toStrictEqual(
      refused(
        'body.tradeCommand: tradeCommand must be Balance or Credit for BrBalance; body.price: price (the amount) is required and must not be 0',
      ),
    );
  });

  it('refuses an unknown or missing transaction type, listing the known ones', () => {
    expect(withBody('TradeTransaction', { tradeTransactionType: 'OrderSend', order: 1 })).toStrictEqual(
      refused(TYPES_MESSAGE),
    );
    expect(withBody('TradeTransaction', {})).toStrictEqual(refused(TYPES_MESSAGE));
  });
});

describe('v2 PF4 trades: TradeTransaction in the reference vocabulary', () => {
  const tx = (body: Record<string, unknown>) => withBody('TradeTransaction', body);
  const open = { orderBy: 5, symbol: 'EURUSD', volume: 10 };

  it('maps each reference name to the platform transaction it stands for, the rest of the body unchanged', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tradeTransactionType: 'OpenMarket', tradeCommand: 'Buy', ...open }, 'BrOrderOpen'],
      [{ tradeTransactionType: 'OpenMarket', tradeCommand: 'Sell', ...open }, 'BrOrderOpen'],
      [{ tradeTransactionType: 'OpenPending', tradeCommand: 'BuyLimit', ...open, price: 1.05 }, 'BrOrderOpen'],
      [{ tradeTransactionType: 'CloseMarket', order: 7, volume: 5 }, 'BrOrderClose'],
      [{ tradeTransactionType: 'ModifyTrade', order: 7, sl: 1.01, tp: 1.2 }, 'BrOrderModify'],
      [{ tradeTransactionType: 'ModifyPending', order: 7, price: 1.02, tradeCommand: 'SellStop' }, 'BrOrderModify'],
      [{ tradeTransactionType: 'DeletePending', order: 7 }, 'BrOrderDelete'],
      [{ tradeTransactionType: 'ActivatePending', order: 7 }, 'BrOrderActivate'],
      [{ tradeTransactionType: 'BalanceAdd', orderBy: 5, tradeCommand: 'Balance', price: 250 }, 'BrBalance'],
      [{ tradeTransactionType: 'CreditAdd', orderBy: 5, tradeCommand: 'Credit', price: -20 }, 'BrBalance'],
    ];
    const MARKET = ['Buy', 'Sell'];
    const PENDING = ['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'];
    // A name acting on a ticket carries the kind of order the ticket must be, for the broker to check.
    const onTicket: Record<string, string[]> = {
      CloseMarket: MARKET,
      ModifyTrade: MARKET,
      ModifyPending: PENDING,
      DeletePending: PENDING,
      ActivatePending: PENDING,
    };
    for (const [body, own] of cases) {
      const name = String(body.tradeTransactionType);
      const kind = onTicket[name] ? { ticketKind: { name, commands: onTicket[name] } } : {};
      expect(tx(body), name).toStrictEqual(accepted({ body: { ...body, ...kind, tradeTransactionType: own } }));
    }
  });

  it("refuses a ticketKind member sent by a client: it is the gateway's own", () => {
    expect(
      tx({ tradeTransactionType: 'BrOrderDelete', order: 7, ticketKind: { name: 'DeletePending', commands: ['Buy'] } })
        .ok,
    ).toBe(false);
  });

  it('fills in the command BalanceAdd and CreditAdd imply when none (or null) is sent', () => {
    expect(tx({ tradeTransactionType: 'BalanceAdd', orderBy: 5, price: 100 })).toStrictEqual(
      accepted({ body: { tradeTransactionType: 'BrBalance', orderBy: 5, price: 100, tradeCommand: 'Balance' } }),
    );
    expect(tx({ tradeTransactionType: 'CreditAdd', orderBy: 5, price: 100, tradeCommand: null })).toStrictEqual(
      accepted({ body: { tradeTransactionType: 'BrBalance', orderBy: 5, price: 100, tradeCommand: 'Credit' } }),
    );
    // The platform's own name implies nothing: BrBalance still needs the command.
    expect(tx({ tradeTransactionType: 'BrBalance', orderBy: 5, price: 100 })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Balance or Credit for BrBalance'),
    );
  });

  it('refuses a command of another kind than the name says, naming both', () => {
    expect(tx({ tradeTransactionType: 'OpenMarket', tradeCommand: 'BuyLimit', ...open, price: 1 })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Buy or Sell for OpenMarket'),
    );
    expect(tx({ tradeTransactionType: 'OpenPending', tradeCommand: 'Buy', ...open })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be BuyLimit or SellLimit or BuyStop or SellStop for OpenPending'),
    );
    expect(tx({ tradeTransactionType: 'BalanceAdd', orderBy: 5, tradeCommand: 'Credit', price: 1 })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Balance for BalanceAdd'),
    );
    expect(tx({ tradeTransactionType: 'CreditAdd', orderBy: 5, tradeCommand: 'Balance', price: 1 })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Credit for CreditAdd'),
    );
    expect(tx({ tradeTransactionType: 'DeletePending', order: 7, tradeCommand: 'Buy' })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be BuyLimit or SellLimit or BuyStop or SellStop for DeletePending'),
    );
    expect(tx({ tradeTransactionType: 'CloseMarket', order: 7, tradeCommand: 'SellStop' })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Buy or Sell for CloseMarket'),
    );
    // Once only, though the platform's name refuses the command too.
    expect(tx({ tradeTransactionType: 'BalanceAdd', orderBy: 5, tradeCommand: 'Buy', price: 1 })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Balance for BalanceAdd'),
    );
    expect(tx({ tradeTransactionType: 'OpenMarket', tradeCommand: 'Credit', ...open })).toStrictEqual(
      refused('body.tradeCommand: tradeCommand must be Buy or Sell for OpenMarket'),
    );
  });

  it('keeps every rule of the platform name it stands for, naming the reference name', () => {
    expect(tx({ tradeTransactionType: 'CloseMarket' })).toStrictEqual(
      refused('body.order: order (the ticket) is required for CloseMarket'),
    );
    expect(tx({ tradeTransactionType: 'OpenMarket', tradeCommand: 'Buy' })).toStrictEqual(
      refused(
        'body.orderBy: orderBy (the login) is required; body.symbol: symbol is required; body.volume: volume is required (1/100 lot, at least 1)',
      ),
    );
    expect(tx({ tradeTransactionType: 'OpenPending', tradeCommand: 'BuyStop', ...open })).toStrictEqual(
      refused('body.price: price is required for a pending order'),
    );
    expect(tx({ tradeTransactionType: 'BalanceAdd', orderBy: 5, price: 0 })).toStrictEqual(
      refused('body.price: price (the amount) is required and must not be 0'),
    );
    expect(tx({ tradeTransactionType: 'OpenMarket', ...open })).toStrictEqual(refused(ORDER_COMMANDS_MESSAGE));
  });

  it('publishes one table: every reference name stands for a platform name, with its meaning', () => {
    expect(Object.keys(TRANSACTION_ALIASES)).toStrictEqual(REFERENCE);
    for (const [name, alias] of Object.entries(TRANSACTION_ALIASES)) {
      expect(TRANSACTION_TYPES, name).toContain(alias.type);
      expect(ownTransactionType(name)).toBe(alias.type);
      expect(alias.meaning, name).toMatch(/^[a-z]/);
    }
    expect(ownTransactionType('BrOrderOpen')).toBe('BrOrderOpen');
    expect(TRANSACTION_TYPE_NAMES).toStrictEqual([...TRANSACTION_TYPES, ...REFERENCE]);
  });

  it('lists both vocabularies in the API description, saying what each reference name stands for', () => {
    const doc = buildOpenApiDocument() as any;
    const field =
      doc.paths['/api/v2/PF4/{tradePlatform}/TradeTransaction'].post.requestBody.content['application/json'].schema
        .properties.tradeTransactionType;
    expect(field.type).toBe('string');
    expect(field.enum).toStrictEqual([
      ...OPEN,
      ...BY_TICKET.slice(0, 5),
      'BrOrderModify',
      'OrderModify',
      'BrOrderDelete',
      'OrderDelete',
      'BrOrderActivate',
      'BrBalance',
      ...REFERENCE,
    ]);
    expect(field.description).toContain('OpenMarket = BrOrderOpen (opens a market trade, Buy or Sell)');
    expect(field.description).toContain('CreditAdd = BrBalance (a credit entry');
    expect(field.description).toContain(
      "A reference name runs as the platform's name it stands for, which the answer carries.",
    );
  });
});

describe('v2 PF4 trades: transaction member limits', () => {
  const close = { tradeTransactionType: 'OrderClose', order: 1 };
  const tx = (extra: Record<string, unknown>) => withBody('TradeTransaction', { ...close, ...extra });

  it('accepts members at their bounds and null texts, passing them unchanged', () => {
    const body = {
      ...close,
      order: 2147483647,
      orderBy: 2147483647,
      volume: 0,
      ieDeviation: 0,
      symbol: text(12),
      comment: text(31),
      tradeCommand: 'Credit',
      price: -1.5,
      sl: 0,
      tp: 2.5,
      expiration: '2024-01-01T00:00:00Z',
      crc: 7,
      tradeRequestFlags: 'x',
    };
    expect(tx(body)).toStrictEqual(accepted({ body }));
    expect(tx({ orderBy: 1, volume: 2147483647, ieDeviation: 2147483647, symbol: 'E', comment: '' })).toStrictEqual(
      accepted({
        body: { ...close, orderBy: 1, volume: 2147483647, ieDeviation: 2147483647, symbol: 'E', comment: '' },
      }),
    );
    expect(tx({ tradeCommand: null, symbol: null, comment: null })).toStrictEqual(
      accepted({ body: { ...close, tradeCommand: null, symbol: null, comment: null } }),
    );
  });

  it('refuses members below their lower bound', () => {
    expect(tx({ order: 0, orderBy: 0, volume: -1, ieDeviation: -1, symbol: '' })).toStrictEqual(
      refused(
        'body.order: order must be at least 1; body.orderBy: orderBy must be at least 1; body.symbol: symbol must not be empty; ' +
          'body.volume: volume must be 0 or positive; body.ieDeviation: ieDeviation must be 0 or positive',
      ),
    );
  });

  it('refuses members above their upper bound', () => {
    expect(
      tx({
        order: 2147483648,
        orderBy: 2147483648,
        volume: 2147483648,
        ieDeviation: 2147483648,
        symbol: text(13),
        comment: text(32),
      }),
    ).toStrictEqual(
      refused(
        'body.order: order must be at most 2147483647; body.orderBy: orderBy must be at most 2147483647; body.symbol: symbol must be at most 12 characters; ' +
          'body.volume: volume must be at most 2147483647; body.ieDeviation: ieDeviation must be at most 2147483647; ' +
          'body.comment: comment must be at most 31 characters',
      ),
    );
  });

  it('refuses fractional whole-number members with their own messages', () => {
    expect(tx({ order: 1.5, orderBy: 1.5, volume: 1.5, ieDeviation: 1.5 })).toStrictEqual(
      refused(
        'body.order: order must be an integer; body.orderBy: orderBy must be an integer; body.volume: volume must be an integer (1/100 lot); ' +
          'body.ieDeviation: ieDeviation must be an integer (points)',
      ),
    );
  });

  it('refuses a price, sl or tp that JSON read as infinite (1e400)', () => {
    expect(tx({ price: Infinity, sl: -Infinity, tp: Infinity })).toStrictEqual(
      refused(
        'body.price: Invalid input: expected number, received Infinity; body.sl: Invalid input: expected number, received -Infinity; ' +
          'body.tp: Invalid input: expected number, received Infinity',
      ),
    );
  });

  it('refuses an unknown trade command, listing the known ones', () => {
    expect(tx({ tradeCommand: 'Hold' })).toStrictEqual(
      refused(
        'body.tradeCommand: tradeCommand must be one of Buy, Sell, BuyLimit, SellLimit, BuyStop, SellStop, Balance, Credit',
      ),
    );
  });

  it('refuses a member the transaction does not have and a missing body', () => {
    expect(tx({ magic: 1 })).toStrictEqual(refused('body: Unrecognized key: "magic"'));
    expect(call('TradeTransaction', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});

describe('v2 PF4 trades: TradeCheckStops', () => {
  const open = {
    tradeTransactionType: 'OrderOpen',
    orderBy: 100,
    tradeCommand: 'BuyStop',
    symbol: 'EURUSD',
    volume: 10,
    price: 1.2,
    sl: 1.1,
    tp: 1.3,
  };

  it('accepts an opening transaction and an optional reference price as a number', () => {
    expect(withBody('TradeCheckStops', open)).toStrictEqual(accepted({ body: open }));
    expect(withBody('TradeCheckStops', open, {}, '?price=1.25')).toStrictEqual(accepted({ price: 1.25, body: open }));
    expect(withBody('TradeCheckStops', open, {}, '?price=-2e3')).toStrictEqual(accepted({ price: -2000, body: open }));
  });

  it('applies the opening rules whatever the transaction type says', () => {
    const other = { tradeTransactionType: 'Anything', orderBy: 1, tradeCommand: 'Sell', symbol: 'E', volume: 1 };
    expect(withBody('TradeCheckStops', other)).toStrictEqual(accepted({ body: other }));
    expect(withBody('TradeCheckStops', { tradeTransactionType: 'OrderClose', order: 1 })).toStrictEqual(
      refused(
        `body.orderBy: orderBy (the login) is required; ${ORDER_COMMANDS_MESSAGE}; body.symbol: symbol is required; body.volume: volume is required (1/100 lot, at least 1)`,
      ),
    );
    expect(withBody('TradeCheckStops', { ...open, price: undefined })).toStrictEqual(
      refused('body.price: price is required for a pending order'),
    );
  });

  it('applies the member limits and refuses a price that is not a number', () => {
    expect(withBody('TradeCheckStops', { ...open, symbol: text(13), comment: text(32), volume: 1.5 })).toStrictEqual(
      refused(
        'body.symbol: symbol must be at most 12 characters; body.volume: volume must be an integer (1/100 lot); body.comment: comment must be at most 31 characters',
      ),
    );
    expect(withBody('TradeCheckStops', open, {}, '?price=cheap')).toStrictEqual(
      refused('price: price must be a number'),
    );
  });
});

describe('v2 PF4 trades: AdmTradeRecordModify body', () => {
  const modify = (value: unknown) => withBody('AdmTradeRecordModify', value, { ticket: '5' });

  it('accepts stops of 0, a ticket of 1 to 2147483647, a 31-character or null comment and other trade fields', () => {
    expect(modify({ order: 1, sl: 0, tp: 0, comment: text(31), magic: 3, commission: -1 })).toStrictEqual(
      accepted({ ticket: 5, body: { order: 1, sl: 0, tp: 0, comment: text(31), magic: 3, commission: -1 } }),
    );
    expect(modify({ order: 2147483647, comment: null })).toStrictEqual(
      accepted({ ticket: 5, body: { order: 2147483647, comment: null } }),
    );
    expect(modify({ sl: 1.5, tp: 2, comment: '' })).toStrictEqual(
      accepted({ ticket: 5, body: { sl: 1.5, tp: 2, comment: '' } }),
    );
    expect(modify({})).toStrictEqual(accepted({ ticket: 5, body: {} }));
  });

  it('refuses negative stops, a ticket below 1 and a 32-character comment with their messages', () => {
    expect(modify({ order: 0, sl: -1, tp: -0.5, comment: text(32) })).toStrictEqual(
      refused(
        'body.order: order must be at least 1; body.sl: sl must be 0 or positive; body.tp: tp must be 0 or positive; body.comment: comment must be at most 31 characters',
      ),
    );
  });

  it('refuses a fractional or too large ticket and a ticket of 0 in the path', () => {
    expect(modify({ order: 1.5 })).toStrictEqual(refused('body.order: order must be an integer'));
    expect(modify({ order: 2147483648 })).toStrictEqual(refused('body.order: order must be at most 2147483647'));
    expect(withBody('AdmTradeRecordModify', {}, { ticket: '0' })).toStrictEqual(
      refused('ticket: ticket must be at least 1'),
    );
  });
});
