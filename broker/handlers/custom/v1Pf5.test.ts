import { resultJson } from '../handler.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pf5V1 } from '../../../shared/catalog/v1/pf5.js';
import type { Operation } from '../../../shared/catalog/index.js';
import { OperationError } from '../../../shared/errors.js';
import { parseJson } from '../../../shared/losslessJson.js';
import { PumpCache } from '../../cache/pumpCache.js';
import type { HandlerResult } from '../handler.js';
import { inlineShaper, v1Pf5Bindings } from './v1Pf5.js';
import {
  cacheOf,
  call,
  failureOf,
  platformOf,
  resync,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

const BIG = 9007199254740993n;

afterEach(() => {
  vi.restoreAllMocks();
});

const live = (entry: Operation, session: ScriptedSession, args: Record<string, unknown>) =>
  call(v1Pf5Bindings, entry, platformOf('PF5', { session }), args);

const cached = (entry: Operation, cache: PumpCache, args: Record<string, unknown>) =>
  call(v1Pf5Bindings, entry, platformOf(cache.family, { cache }), args);

/** The rows of a json answer, ids beyond 2^53 − 1 read exactly. */
const rows = (result: HandlerResult) => {
  expect(result.data).toBeUndefined();
  return parseJson(resultJson(result)!) as Array<Record<string, unknown>>;
};
const keysOf = (result: HandlerResult, key: string) => rows(result).map((r) => r[key]);

const ACCOUNT_FIELDS = [
  'login',
  'balance',
  'credit',
  'equity',
  'margin',
  'marginFree',
  'marginLevel',
  'profit',
  'storage',
];
const EMPTY_ACCOUNT = {
  login: 0,
  balance: 0,
  credit: 0,
  equity: 0,
  margin: 0,
  marginFree: 0,
  marginLevel: 0,
  profit: 0,
  storage: 0,
};

describe('UserAccountGet and UserAccountRequest', () => {
  for (const entry of [pf5V1.UserAccountGet, pf5V1.UserAccountRequest]) {
    const command = entry.name;

    it(`${command}: sends the call's arguments as a keyed read and answers PF5UserAccount, fields in order, typed`, async () => {
      const session = new ScriptedSession().answers(command, {
        storage: -2.5,
        login: 7.9,
        balance: 100.5,
        credit: '5',
        equity: Number.NaN,
        margin: Number.POSITIVE_INFINITY,
        marginFree: 3,
        marginLevel: 12.25,
        extra: 'dropped',
      });
      const result = await live(entry, session, { login: 7 });
      expect(result).toEqual({
        data: {
          login: 7,
          balance: 100.5,
          credit: 0,
          equity: 0,
          margin: 0,
          marginFree: 3,
          marginLevel: 12.25,
          profit: 0,
          storage: -2.5,
        },
      });
      expect(Object.keys(result.data as object)).toEqual(ACCOUNT_FIELDS);
      expect(session.sent).toEqual([sent(command, { login: 7 }, { keyedRead: true })]);
    });

    it(`${command}: keeps an exact int64 login and reads a bigint amount as a number`, async () => {
      const session = new ScriptedSession().answers(command, { login: BIG, balance: 5n, profit: -7.9 });
      expect(await live(entry, session, { login: BIG })).toEqual({
        data: { ...EMPTY_ACCOUNT, login: BIG, balance: 5, profit: -7.9 },
      });
      expect(session.sent).toEqual([sent(command, { login: BIG }, { keyedRead: true })]);
    });

    it(`${command}: answers every field empty for an answer that is not a record`, async () => {
      for (const answer of [null, undefined, 'account', 7]) {
        expect(await live(entry, new ScriptedSession().answers(command, answer), { login: 7 })).toEqual({
          data: EMPTY_ACCOUNT,
        });
      }
    });
  }

  it('truncates integers toward zero', async () => {
    const session = new ScriptedSession().answers('UserAccountGet', { login: -7.9 });
    expect(await live(pf5V1.UserAccountGet, session, { login: 7 })).toEqual({ data: { ...EMPTY_ACCOUNT, login: -7 } });
  });

  it('fails as the session failed', async () => {
    const unknown = new OperationError('NotFound', 'not found', 13);
    expect(
      await failureOf(() =>
        live(pf5V1.UserAccountGet, new ScriptedSession().fails('UserAccountGet', unknown), { login: 7 }),
      ),
    ).toBe(unknown);
  });
});

describe('ChartRequest', () => {
  const args = { symbol: 'EURUSD', fromTime: '2024-01-01T00:00:00Z', toTime: '2024-01-02T00:00:00Z' };

  it("sends the call's arguments as an unkeyed read and answers each bar as PF5ChartBar", async () => {
    const session = new ScriptedSession().answers('ChartRequest', [
      {
        dateTime: '2024-01-01T00:01:00Z',
        open: 1.1,
        high: 1.2,
        low: 1,
        close: 1.15,
        tickVolume: 10.7,
        spread: 2,
        volume: 0,
        extra: 1,
      },
      { open: '1.1', tickVolume: 3n, dateTime: 1704067260 },
    ]);
    const result = await live(pf5V1.ChartRequest, session, args);
    expect(result).toEqual({
      data: [
        {
          dateTime: '2024-01-01T00:01:00Z',
          open: 1.1,
          high: 1.2,
          low: 1,
          close: 1.15,
          tickVolume: 10,
          spread: 2,
          volume: 0,
        },
        { dateTime: '1970-01-01T00:00:00Z', open: 0, high: 0, low: 0, close: 0, tickVolume: 3n, spread: 0, volume: 0 },
      ],
    });
    expect(Object.keys((result.data as object[])[1])).toEqual([
      'dateTime',
      'open',
      'high',
      'low',
      'close',
      'tickVolume',
      'spread',
      'volume',
    ]);
    expect(session.sent).toEqual([sent('ChartRequest', args, { keyedRead: false })]);
    expect(session.sent[0].args).not.toBe(args);
  });

  it('answers no bars for an answer that is not a list', async () => {
    for (const answer of [null, undefined, {}, { dateTime: '2024-01-01T00:01:00Z' }, 'bars']) {
      expect(await live(pf5V1.ChartRequest, new ScriptedSession().answers('ChartRequest', answer), args)).toEqual({
        data: [],
      });
    }
  });
});

describe('inlineShaper', () => {
  it('answers each published field by its type, empty when the value has another', () => {
    const shape = inlineShaper({
      properties: {
        flag: { type: 'boolean' },
        name: { type: 'string' },
        at: { type: 'string', format: 'date-time' },
        count: { type: 'integer' },
        amount: { type: 'number' },
        other: {},
      },
    });
    expect(
      shape({ flag: true, name: 'x', at: '2024-01-01T00:00:00Z', count: 2.5, amount: 2.5, other: 4, more: 1 }),
    ).toEqual({ flag: true, name: 'x', at: '2024-01-01T00:00:00Z', count: 2, amount: 2.5, other: 4 });
    expect(shape({ flag: 'true', name: 1, at: null, count: '2', amount: null, other: 'x' })).toEqual({
      flag: false,
      name: '',
      at: '1970-01-01T00:00:00Z',
      count: 0,
      amount: 0,
      other: 0,
    });
    expect(shape({ flag: 1, count: 3n, amount: 3n, other: 3n })).toEqual({
      flag: false,
      name: '',
      at: '1970-01-01T00:00:00Z',
      count: 3n,
      amount: 3,
      other: 3,
    });
  });

  it('answers an empty record for a schema without properties', () => {
    expect(inlineShaper({})({ a: 1 })).toEqual({});
  });
});

describe('reads by a list of keys', () => {
  const cache = cacheOf('PF5', {
    users: [
      { login: 1, group: 'real', name: 'One' },
      { login: 2, group: 'demo' },
      { login: BIG, group: 'real' },
    ],
    positions: [
      { position: 11, login: 1, symbol: 'EURUSD' },
      { position: 12, login: 2, symbol: 'EURUSD' },
      { position: BIG, login: 1 },
    ],
    orders: [
      { order: 21, login: 1 },
      { order: 22, login: 2 },
    ],
  });

  it('UserGetByLogins answers the known accounts, each once, in the order asked, exactly as cached', () => {
    const result = cached(pf5V1.UserGetByLogins, cache, { logins: [2, 99, 1, 2, BIG, 1] }) as HandlerResult;
    expect(rows(result)).toEqual([cache.get('users', 2), cache.get('users', 1), cache.get('users', BIG)]);
    expect(resultJson(result)).toContain('"login":9007199254740993,');
  });

  it('PositionGetByTickets and OrderGetByTickets answer the known tickets, each once, in the order asked', () => {
    expect(
      keysOf(
        cached(pf5V1.PositionGetByTickets, cache, { tickets: [BIG, 12, 13, 11, BIG] }) as HandlerResult,
        'position',
      ),
    ).toEqual([BIG, 12, 11]);
    expect(keysOf(cached(pf5V1.OrderGetByTickets, cache, { tickets: [22, 21, 22] }) as HandlerResult, 'order')).toEqual(
      [22, 21],
    );
  });

  it('answers an empty list when no key is known', () => {
    expect(cached(pf5V1.OrderGetByTickets, cache, { tickets: [11, 12] })).toEqual({ json: '[]' });
    expect(cached(pf5V1.PositionGetByTickets, cacheOf('PF4'), { tickets: [11] })).toEqual({ json: '[]' });
  });

  it('waits for the first snapshot', async () => {
    const later = new PumpCache('PF5', { clock: () => 0 });
    const pending = cached(pf5V1.UserGetByLogins, later, { logins: [1] });
    expect(pending).toBeInstanceOf(Promise);
    resync(later, { users: [{ login: 1 }] });
    expect(keysOf(await pending, 'login')).toEqual([1]);
  });
});

describe('reads by logins', () => {
  const cache = cacheOf('PF5', {
    positions: [
      { position: 31, login: 8 },
      { position: 11, login: 7 },
      { position: 21, login: 8 },
      { position: 41, login: 9 },
      { position: 12, login: 7 },
    ],
    orders: [
      { order: 5, login: BIG },
      { order: 4, login: 7 },
      { order: 3, login: BIG },
    ],
  });

  it('PositionGetByLogins answers login by login in the order asked, each login once, by ticket within one', () => {
    const result = cached(pf5V1.PositionGetByLogins, cache, { logins: [8, 6, 7, 8] }) as HandlerResult;
    expect(keysOf(result, 'position')).toEqual([21, 31, 11, 12]);
    expect(rows(result)[0]).toEqual(cache.get('positions', 21));
  });

  it('OrderGetByLogins reads exact int64 logins', () => {
    expect(keysOf(cached(pf5V1.OrderGetByLogins, cache, { logins: [BIG, 7] }) as HandlerResult, 'order')).toEqual([
      3, 5, 4,
    ]);
    expect(cached(pf5V1.OrderGetByLogins, cache, { logins: [6] })).toEqual({ json: '[]' });
  });

  it('answers an empty list where the cache keeps no such table', () => {
    expect(cached(pf5V1.PositionGetByLogins, cacheOf('PF4'), { logins: [7] })).toEqual({ json: '[]' });
    expect(cached(pf5V1.OrderGetByLogins, cacheOf('PF4'), { logins: [7] })).toEqual({ json: '[]' });
  });
});

describe("reads by the account's group", () => {
  const users = [
    { login: 1, group: 'real-a' },
    { login: 2, group: 'real-test' },
    { login: 3, group: 'demo' },
    { login: 4 },
    { login: BIG, group: 'real-b' },
  ];
  const book = (key: string) => [
    { [key]: 10, login: 1, symbol: 'EURUSD' },
    { [key]: 11, login: 1, symbol: 'USDJPY' },
    { [key]: 12, login: 2, symbol: 'EURUSD' },
    { [key]: 13, login: 3, symbol: 'GBPUSD' },
    { [key]: 14, login: 4, symbol: 'EURUSD' },
    { [key]: 15, login: 5, symbol: 'EURUSD' },
    { [key]: 16, symbol: 'EURUSD' },
    { [key]: 17, login: 1, symbol: 'GBPUSD' },
    { [key]: 9, login: 1, symbol: 'EURUSD' },
    { [key]: 18, login: BIG, symbol: 'GBPUSD' },
    { [key]: 19, login: 1, symbol: 'EURUSD,GBPUSD' },
  ];
  const cache = cacheOf('PF5', { users, positions: book('position'), orders: book('order') });
  const MASK = 'real*, !real-test';

  it("PositionGetBySymbol answers, by ticket, the listed symbols' positions of accounts the mask selects", () => {
    const result = cached(pf5V1.PositionGetBySymbol, cache, { mask: MASK, symbol: 'EURUSD, GBPUSD,' }) as HandlerResult;
    expect(keysOf(result, 'position')).toEqual([9, 10, 17, 18]);
    expect(rows(result)[0]).toEqual(cache.get('positions', 9));
  });

  it('OrderGetBySymbol answers the same selection of orders', () => {
    expect(
      keysOf(cached(pf5V1.OrderGetBySymbol, cache, { mask: MASK, symbol: 'GBPUSD' }) as HandlerResult, 'order'),
    ).toEqual([17, 18]);
    expect(cached(pf5V1.OrderGetBySymbol, cache, { mask: MASK, symbol: 'XAUUSD' })).toEqual({ json: '[]' });
  });

  it('OrderGetByGroup answers every order of accounts the mask selects, whatever the symbol', () => {
    expect(keysOf(cached(pf5V1.OrderGetByGroup, cache, { mask: MASK }) as HandlerResult, 'order')).toEqual([
      9, 10, 11, 17, 18, 19,
    ]);
    expect(keysOf(cached(pf5V1.OrderGetByGroup, cache, { mask: '*' }) as HandlerResult, 'order')).toEqual([
      9, 10, 11, 12, 13, 17, 18, 19,
    ]);
    expect(cached(pf5V1.OrderGetByGroup, cache, { mask: 'nothing' })).toEqual({ json: '[]' });
  });

  it("reads each account's group once per call", async () => {
    const get = vi.spyOn(cache, 'view');
    await cached(pf5V1.OrderGetByGroup, cache, { mask: '*' });
    const logins = get.mock.calls.map(([table, login]) => `${table}:${String(login)}`);
    expect([...logins].sort()).toEqual(['users:1', 'users:2', 'users:3', 'users:4', 'users:5', `users:${BIG}`]);
  });

  it('answers an empty list where the cache keeps no such table', () => {
    expect(cached(pf5V1.OrderGetByGroup, cacheOf('PF4'), { mask: '*' })).toEqual({ json: '[]' });
    expect(cached(pf5V1.PositionGetBySymbol, cacheOf('PF4'), { mask: '*', symbol: 'EURUSD' })).toEqual({ json: '[]' });
  });
});
