/**
 * The input rules of the v1 PF5 catalog entries (shared/catalog/v1/pf5.ts), checked through the edge's validation of
 * one call (`validateInputs`): every refusal with its exact message, the bounds on both sides (64-bit ids read exactly
 * up to and beyond 2^53 − 1, refused past 2^63 − 1), the exact arguments a handler receives, the three routes of each
 * optional time window, the group and symbol masks, and the parts of each declaration the rest of the suite does not
 * pin (time-out class, read kind, handler, scope, answer and the manager arguments it builds).
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../index.js';
import { validateInputs } from '../inputs.js';
import { PF5_CHART_BAR, PF5_USER_ACCOUNT, SYMBOL_UPDATE_FIELDS, maskMatcher, symbolsOf } from './pf5.js';
import { pf5V2 } from '../v2/pf5.js';

const op = (name: string): Operation => {
  const entry = findOperation(`v1.PF5.${name}`);
  if (!entry) throw new Error(`no v1 PF5 entry ${name}`);
  return entry;
};
/** One call of the v1 PF5 entry `name`: path segments, query text (`?a=1`) and, when given, a JSON body. */
const call = (name: string, path: Record<string, string> = {}, query = '', body?: unknown) =>
  validateInputs(
    op(name),
    path,
    new URL(`http://edge/x${query}`),
    body === undefined ? { kind: 'none' } : { kind: 'json', value: body },
  );
const accepted = (args: Record<string, unknown>) => ({ ok: true, args });
const refused = (message: string) => ({ ok: false, message });
const argsOf = (r: ReturnType<typeof call>) => {
  if (!r.ok) throw new Error(r.message);
  return r.args as any;
};

const SAFE = '9007199254740991';
const INT64_MAX = '9223372036854775807';
const PAST_INT64 = '9223372036854775808';
const T = '2024-04-01T08:00:00.000Z';
const BEFORE_T = '2024-04-01T07:59:59.999Z';

// ---- declarations ---------------------------------------------------------------------------------------------

/** name → [time-out class, read, mutating, tag]. The spec's T columns give the time-out classes. */
const DECLARED: Record<string, [string, string, boolean, string]> = {
  UserAdd: ['change', 'live', true, 'PF5 Users'],
  UserRequest: ['read', 'live', false, 'PF5 Users'],
  UserAccountGet: ['read', 'live', false, 'PF5 Users'],
  UserAccountRequest: ['read', 'live', false, 'PF5 Users'],
  UserGet: ['read', 'cached', false, 'PF5 Users'],
  UserGetByLogins: ['read', 'cached', false, 'PF5 Users'],
  UserGetByGroup: ['read', 'cached', false, 'PF5 Users'],
  UserUpdate: ['change', 'live', true, 'PF5 Users'],
  UserPasswordCheck: ['change', 'live', false, 'PF5 Users'],
  UserPasswordChange: ['change', 'live', true, 'PF5 Users'],
  PositionGet: ['read', 'cached', false, 'PF5 Positions'],
  PositionGetByLogins: ['read', 'cached', false, 'PF5 Positions'],
  PositionGetByTickets: ['read', 'cached', false, 'PF5 Positions'],
  PositionRequestByGroup: ['read', 'live', false, 'PF5 Positions'],
  PositionGetBySymbol: ['read', 'cached', false, 'PF5 Positions'],
  PositionDeleteBatch: ['trade', 'live', true, 'PF5 Positions'],
  OrderGet: ['read', 'cached', false, 'PF5 Orders'],
  OrderGetByGroup: ['read', 'cached', false, 'PF5 Orders'],
  OrderGetBySymbol: ['read', 'cached', false, 'PF5 Orders'],
  OrderGetByLogins: ['read', 'cached', false, 'PF5 Orders'],
  OrderGetByTickets: ['read', 'cached', false, 'PF5 Orders'],
  OrderRequestByGroup: ['read', 'live', false, 'PF5 Orders'],
  OrderRequestByGroupSymbol: ['read', 'live', false, 'PF5 Orders'],
  OrderRequestByTickets: ['change', 'live', false, 'PF5 Orders'],
  HistoryRequest: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestSince: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestAll: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestByGroup: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestByGroupSince: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestByGroupAll: ['history', 'live', false, 'PF5 Orders'],
  HistoryRequestByTickets: ['history', 'live', false, 'PF5 Orders'],
  OrderDeleteBatch: ['trade', 'live', true, 'PF5 Orders'],
  DealRequest: ['history', 'live', false, 'PF5 Deals'],
  DealRequestSince: ['history', 'live', false, 'PF5 Deals'],
  DealRequestAll: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroup: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroupSince: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroupAll: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroupSymbol: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroupSymbolSince: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByGroupSymbolAll: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByLogins: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByLoginsSince: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByLoginsAll: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByTicket: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByTickets: ['history', 'live', false, 'PF5 Deals'],
  DealRequestByTicketsQuery: ['history', 'live', false, 'PF5 Deals'],
  DealUpdate: ['trade', 'live', true, 'PF5 Deals'],
  DealDeleteBatch: ['trade', 'live', true, 'PF5 Deals'],
  GroupGet: ['read', 'cached', false, 'PF5 Groups'],
  GroupRequest: ['read', 'live', false, 'PF5 Groups'],
  GroupRequestArray: ['read', 'live', false, 'PF5 Groups'],
  SymbolGet: ['read', 'cached', false, 'PF5 Symbols'],
  SymbolUpdate: ['change', 'live', true, 'PF5 Symbols'],
  SymbolRequestArray: ['read', 'live', false, 'PF5 Symbols'],
  SymbolRequestArrayBase: ['read', 'live', false, 'PF5 Symbols'],
  ChartRequest: ['history', 'live', false, 'PF5 History'],
  ChartRequestSince: ['history', 'live', false, 'PF5 History'],
  ChartRequestAll: ['history', 'live', false, 'PF5 History'],
};
const WINDOWED = [
  'HistoryRequest',
  'HistoryRequestByGroup',
  'DealRequest',
  'DealRequestByGroup',
  'DealRequestByGroupSymbol',
  'DealRequestByLogins',
  'ChartRequest',
];
/** The handler of each entry: one per window (its three routes), SymbolRequestArray for both arities, else PF5.<name>. */
const handlerOf = (name: string) => {
  const windowBase = WINDOWED.find((w) => name === w || name === `${w}Since` || name === `${w}All`);
  return windowBase
    ? `PF5.${windowBase}`
    : name === 'SymbolRequestArrayBase'
      ? 'PF5.SymbolRequestArray'
      : `PF5.${name}`;
};
const TICKET_BATCHES = [
  'PositionDeleteBatch',
  'OrderRequestByTickets',
  'HistoryRequestByTickets',
  'OrderDeleteBatch',
  'DealRequestByTickets',
  'DealDeleteBatch',
];

describe('v1 PF5 declarations', () => {
  it("gives each entry its handler, the spec's time-out class, its read kind, its mutating flag, the scope that follows, and its tag", () => {
    expect(Object.keys(DECLARED)).toHaveLength(59);
    for (const [name, [timeout, read, mutating, tag]] of Object.entries(DECLARED)) {
      const e = op(name);
      expect(
        {
          op: e.op,
          timeout: e.timeout,
          read: e.read,
          mutating: e.mutating,
          destructive: e.destructive,
          scope: e.scope,
          tag: e.tag,
        },
        name,
      ).toStrictEqual({
        op: handlerOf(name),
        timeout,
        read,
        mutating,
        destructive: false,
        scope: mutating || name === 'UserPasswordCheck' ? 'webapi.write' : 'webapi',
        tag,
      });
      expect(e.passwordCheck, name).toStrictEqual(name === 'UserPasswordCheck' ? { login: 'login' } : undefined);
      expect(e.summary.length, `${name} summary`).toBeGreaterThan(20);
    }
  });

  it('shares the v2 handler and answer of UserGet, GroupGet and SymbolGet', () => {
    for (const name of ['UserGet', 'GroupGet', 'SymbolGet'] as const) {
      expect(op(name).op, name).toBe(pf5V2[name].op);
      expect(op(name).answer, name).toBe(pf5V2[name].answer);
    }
  });

  it('declares the cached, live and custom answers without argument builders', () => {
    const live = (command: string, keyedRead?: true) => ({
      kind: 'live',
      command,
      ...(keyedRead ? { keyedRead } : {}),
    });
    const custom = { kind: 'custom' };
    const expected: Record<string, unknown> = {
      UserRequest: live('UserRequest', true),
      UserAccountGet: custom,
      UserAccountRequest: custom,
      UserGetByLogins: custom,
      PositionGet: { kind: 'cachedList', table: 'positions', index: { name: 'login', arg: 'login' } },
      PositionGetByLogins: custom,
      PositionGetByTickets: custom,
      PositionRequestByGroup: live('PositionRequestByGroup'),
      PositionGetBySymbol: custom,
      OrderGet: { kind: 'cachedRecord', table: 'orders', key: 'ticket', what: 'order' },
      OrderGetByGroup: custom,
      OrderGetBySymbol: custom,
      OrderGetByLogins: custom,
      OrderGetByTickets: custom,
      OrderRequestByGroup: live('OrderRequestByGroup'),
      OrderRequestByGroupSymbol: live('OrderRequestByGroupSymbol'),
      DealRequestByTicket: live('DealRequestByTicket', true),
      GroupRequest: live('GroupRequest', true),
      GroupRequestArray: live('GroupRequestArray'),
      SymbolRequestArray: live('SymbolRequestArray'),
      SymbolRequestArrayBase: live('SymbolRequestArray'),
    };
    for (const w of WINDOWED) {
      const answer =
        w === 'ChartRequest' ? custom : w === 'DealRequestByLogins' ? live('DealRequestByLogins') : live(w);
      for (const name of [w, `${w}Since`, `${w}All`]) expected[name] = answer;
    }
    for (const [name, answer] of Object.entries(expected)) expect(op(name).answer, name).toStrictEqual(answer);
  });

  it('answers a boolean for the deletes and the password calls, and the records the contract lacks for accounts and charts', () => {
    for (const name of [
      'UserPasswordCheck',
      'UserPasswordChange',
      'PositionDeleteBatch',
      'OrderDeleteBatch',
      'DealDeleteBatch',
    ]) {
      expect(op(name).response, name).toStrictEqual({ type: 'boolean' });
    }
    expect(op('UserAccountGet').response).toBe(PF5_USER_ACCOUNT);
    expect(op('UserAccountRequest').response).toBe(PF5_USER_ACCOUNT);
    for (const name of ['ChartRequest', 'ChartRequestSince', 'ChartRequestAll'])
      expect(op(name).response, name).toStrictEqual({ type: 'array', items: PF5_CHART_BAR });
  });

  it('publishes PF5UserAccount and PF5ChartBar as closed records with every field required', () => {
    const double = { type: 'number', format: 'double' };
    const int64 = { type: 'integer', format: 'int64' };
    expect(PF5_USER_ACCOUNT).toStrictEqual({
      type: 'object',
      title: 'PF5UserAccount',
      description: "An account's balance, credit, equity and margin at the current quotes.",
      properties: {
        login: int64,
        balance: double,
        credit: double,
        equity: double,
        margin: double,
        marginFree: double,
        marginLevel: { ...double, description: 'equity / margin in percent; 0 without margin' },
        profit: double,
        storage: double,
      },
      required: ['login', 'balance', 'credit', 'equity', 'margin', 'marginFree', 'marginLevel', 'profit', 'storage'],
      additionalProperties: false,
    });
    expect(PF5_CHART_BAR).toStrictEqual({
      type: 'object',
      title: 'PF5ChartBar',
      description: 'One M1 bar of bid prices.',
      properties: {
        dateTime: { type: 'string', format: 'date-time', description: 'the minute the bar opens' },
        open: double,
        high: double,
        low: double,
        close: double,
        tickVolume: { ...int64, description: 'ticks in the minute' },
        spread: { type: 'integer', format: 'int32', description: 'spread in points' },
        volume: { ...int64, description: 'exchange volume (0 for over-the-counter symbols)' },
      },
      required: ['dateTime', 'open', 'high', 'low', 'close', 'tickVolume', 'spread', 'volume'],
      additionalProperties: false,
    });
  });
});

// ---- ids in paths and queries ---------------------------------------------------------------------------------------

describe('v1 PF5 64-bit ids in paths and queries', () => {
  it('reads a path login exactly: a number up to 2^53 − 1, a bigint beyond, up to 2^63 − 1; refuses 0 and 2^63', () => {
    for (const name of [
      'UserRequest',
      'UserAccountGet',
      'UserAccountRequest',
      'UserGet',
      'PositionGet',
      'HistoryRequestAll',
      'DealRequestAll',
    ]) {
      expect(call(name, { login: '1' }), name).toStrictEqual(accepted({ login: 1 }));
      expect(call(name, { login: SAFE }), name).toStrictEqual(accepted({ login: 9007199254740991 }));
      expect(call(name, { login: '9007199254740992' }), name).toStrictEqual(accepted({ login: 9007199254740992n }));
      expect(call(name, { login: INT64_MAX }), name).toStrictEqual(accepted({ login: 9223372036854775807n }));
      expect(call(name, { login: PAST_INT64 }), name).toStrictEqual(
        refused(`login: login must be at most ${INT64_MAX}`),
      );
      expect(call(name, { login: '0' }), name).toStrictEqual(refused('login: login must be at least 1'));
      expect(call(name, { login: '-5' }), name).toStrictEqual(refused('login: login must be a positive integer'));
    }
  });

  it('reads a path ticket the same way, naming the ticket', () => {
    for (const name of ['OrderGet', 'DealRequestByTicket']) {
      expect(call(name, { ticket: '1' }), name).toStrictEqual(accepted({ ticket: 1 }));
      expect(call(name, { ticket: INT64_MAX }), name).toStrictEqual(accepted({ ticket: 9223372036854775807n }));
      expect(call(name, { ticket: PAST_INT64 }), name).toStrictEqual(
        refused(`ticket: ticket must be at most ${INT64_MAX}`),
      );
      expect(call(name, { ticket: '0' }), name).toStrictEqual(refused('ticket: ticket must be at least 1'));
    }
  });

  it('reads repeated logins and tickets queries exactly, and names the list and the position of a bad id', () => {
    const lists: Array<[string, string]> = [
      ['UserGetByLogins', 'logins'],
      ['PositionGetByLogins', 'logins'],
      ['OrderGetByLogins', 'logins'],
      ['DealRequestByLoginsAll', 'logins'],
      ['PositionGetByTickets', 'tickets'],
      ['OrderGetByTickets', 'tickets'],
      ['DealRequestByTicketsQuery', 'tickets'],
    ];
    for (const [name, list] of lists) {
      expect(call(name, {}, `?${list}=1&${list}=${SAFE}&${list}=${INT64_MAX}`), name).toStrictEqual(
        accepted({ [list]: [1, 9007199254740991, 9223372036854775807n] }),
      );
      expect(call(name, {}, `?${list}=5&${list}=0`), name).toStrictEqual(
        refused(`${list}.1: ${list} must be at least 1`),
      );
      expect(call(name, {}, `?${list}=${PAST_INT64}`), name).toStrictEqual(
        refused(`${list}.0: ${list} must be at most ${INT64_MAX}`),
      );
      expect(call(name, {}, ''), name).toStrictEqual(
        refused(`${list}: Invalid input: expected array, received undefined`),
      );
    }
  });
});

// ---- names, masks and symbol lists ------------------------------------------------------------------------------------

describe('v1 PF5 names, masks and symbol lists', () => {
  it('takes full group names of 1 to 64 characters', () => {
    for (const name of ['GroupGet', 'GroupRequest']) {
      expect(call(name, { group: 'real\\pro\\usd' }), name).toStrictEqual(accepted({ group: 'real\\pro\\usd' }));
      expect(call(name, { group: 'g'.repeat(64) }), name).toStrictEqual(accepted({ group: 'g'.repeat(64) }));
      expect(call(name, { group: '' }), name).toStrictEqual(refused('group: group must not be empty'));
      expect(call(name, { group: 'g'.repeat(65) }), name).toStrictEqual(
        refused('group: group must be at most 64 characters'),
      );
    }
  });

  it('takes symbol names of 1 to 32 characters', () => {
    for (const name of ['SymbolGet', 'ChartRequestAll']) {
      expect(call(name, { symbol: 'S'.repeat(32) }), name).toStrictEqual(accepted({ symbol: 'S'.repeat(32) }));
      expect(call(name, { symbol: '' }), name).toStrictEqual(refused('symbol: symbol must not be empty'));
      expect(call(name, { symbol: 'S'.repeat(33) }), name).toStrictEqual(
        refused('symbol: symbol must be at most 32 characters'),
      );
    }
  });

  it('takes a mask of 1 to 1024 characters on every mask route', () => {
    for (const name of [
      'UserGetByGroup',
      'PositionRequestByGroup',
      'OrderGetByGroup',
      'OrderRequestByGroup',
      'GroupRequestArray',
      'HistoryRequestByGroupAll',
      'DealRequestByGroupAll',
      'SymbolRequestArrayBase',
    ]) {
      expect(call(name, { mask: 'real\\*,!real\\vip' }), name).toStrictEqual(accepted({ mask: 'real\\*,!real\\vip' }));
      expect(call(name, { mask: 'm'.repeat(1024) }), name).toStrictEqual(accepted({ mask: 'm'.repeat(1024) }));
      expect(call(name, { mask: '' }), name).toStrictEqual(refused('mask: mask must not be empty'));
      expect(call(name, { mask: 'm'.repeat(1025) }), name).toStrictEqual(
        refused('mask: mask must be at most 1024 characters'),
      );
    }
  });

  it('SymbolRequestArray: takes the mask and the group whose overrides apply', () => {
    expect(call('SymbolRequestArray', { mask: 'EUR*', group: 'real\\usd' })).toStrictEqual(
      accepted({ mask: 'EUR*', group: 'real\\usd' }),
    );
    expect(call('SymbolRequestArray', { mask: 'EUR*', group: 'g'.repeat(65) })).toStrictEqual(
      refused('group: group must be at most 64 characters'),
    );
  });

  it('takes a symbol list that names at least one symbol, passed on as sent', () => {
    for (const name of [
      'PositionGetBySymbol',
      'OrderGetBySymbol',
      'OrderRequestByGroupSymbol',
      'DealRequestByGroupSymbolAll',
    ]) {
      for (const list of ['EURUSD', 'EURUSD, GBPUSD', 'EURUSD,', ' ,USDJPY', 's'.repeat(1024)]) {
        expect(call(name, { mask: '*', symbol: list }), `${name} ${list.slice(0, 20)}`).toStrictEqual(
          accepted({ mask: '*', symbol: list }),
        );
      }
    }
  });

  it('refuses a symbol list of only commas and blanks, and one over 1024 characters', () => {
    for (const name of [
      'PositionGetBySymbol',
      'OrderGetBySymbol',
      'OrderRequestByGroupSymbol',
      'DealRequestByGroupSymbolAll',
    ]) {
      for (const list of ['', ' ', ',', ' , ,']) {
        expect(call(name, { mask: '*', symbol: list }), `${name} ${JSON.stringify(list)}`).toStrictEqual(
          refused('symbol: symbol must name at least one symbol'),
        );
      }
      expect(call(name, { mask: '*', symbol: 's'.repeat(1025) }), name).toStrictEqual(
        refused('symbol: symbol must be at most 1024 characters'),
      );
    }
  });
});

describe('v1 PF5 masks and symbol lists as the cached reads apply them', () => {
  it('matches full names only, case-sensitively', () => {
    const m = maskMatcher('real');
    expect(['real', 'real2', 'rea', 'Real', ''].map(m)).toStrictEqual([true, false, false, false, false]);
  });

  it('lets * stand for any run of characters, none included, anywhere in the pattern', () => {
    expect(['', 'x', 'real\\a'].map(maskMatcher('*'))).toStrictEqual([true, true, true]);
    expect(['real\\', 'real\\eur', 'demo\\eur', 'real'].map(maskMatcher('real\\*'))).toStrictEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(['vip', 'real\\vip', 'real\\vip2'].map(maskMatcher('*vip'))).toStrictEqual([true, true, false]);
    expect(['abc', 'abxbc', 'abcbc', 'abcx', 'ac'].map(maskMatcher('a*bc'))).toStrictEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(['ab', 'abc', 'a'].map(maskMatcher('ab**'))).toStrictEqual([true, true, false]);
    expect(['a1b2c', 'abc', 'acb'].map(maskMatcher('a*b*c'))).toStrictEqual([true, true, false]);
  });

  it('takes comma-separated names, blanks around them and empty parts ignored', () => {
    expect(['demo', 'real', 'other', '', ' real'].map(maskMatcher(' demo , real,,'))).toStrictEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('lets a leading ! exclude, winning over the includes; excludes alone select nothing', () => {
    expect(['real\\eur', 'real\\vip', 'demo'].map(maskMatcher('real\\*,!real\\vip'))).toStrictEqual([
      true,
      false,
      false,
    ]);
    expect(['demo', 'real', '!demo'].map(maskMatcher('!demo,*'))).toStrictEqual([false, true, true]);
    expect(['a', 'vip1', 'x\\vip'].map(maskMatcher('*,!*vip*'))).toStrictEqual([true, false, false]);
    expect(['demo', 'real'].map(maskMatcher('!demo'))).toStrictEqual([false, false]);
    // An exclude is never also an include, even for a name that starts with the `!`; a `!` elsewhere is a character.
    expect(['!demo1', 'demo1', '!x'].map(maskMatcher('!demo*,!x'))).toStrictEqual([false, false, false]);
    expect(['x!', 'x', 'a!b'].map(maskMatcher('x!,a!b'))).toStrictEqual([true, false, true]);
    expect(['demo', 'test', 'real'].map(maskMatcher('*,!demo,!test'))).toStrictEqual([false, false, true]);
  });

  it('keeps the matcher of the last mask and builds a new one for another mask', () => {
    const a = maskMatcher('alpha');
    expect(maskMatcher('alpha')).toBe(a);
    const b = maskMatcher('beta');
    expect([b('beta'), b('alpha')]).toStrictEqual([true, false]);
    expect(maskMatcher('alpha')('alpha')).toBe(true);
  });

  it('reads a symbol list as its distinct trimmed names', () => {
    expect(symbolsOf(' EURUSD, GBPUSD,,EURUSD , ')).toStrictEqual(new Set(['EURUSD', 'GBPUSD']));
    expect(symbolsOf(',')).toStrictEqual(new Set());
  });

  it('UserGetByGroup keeps the cached accounts whose group the mask selects, an account without a group as an empty name', () => {
    const answer = op('UserGetByGroup').answer as any;
    expect(answer).toStrictEqual({ kind: 'cachedList', table: 'users', where: expect.any(Function) });
    const args = argsOf(call('UserGetByGroup', { mask: 'real\\*,!real\\vip' }));
    expect(
      [{ group: 'real\\eur' }, { group: 'real\\vip' }, { group: 'demo' }, {}].map((row) => answer.where(row, args)),
    ).toStrictEqual([true, false, false, false]);
    const all = argsOf(call('UserGetByGroup', { mask: '*' }));
    expect([{}, { group: null }, { group: 'x' }].map((row) => answer.where(row, all))).toStrictEqual([
      true,
      true,
      true,
    ]);
  });
});

// ---- optional time windows ----------------------------------------------------------------------------------------------

describe('v1 PF5 optional time windows', () => {
  /** The key segments of each window and the arguments they give. */
  const KEYS: Record<string, [Record<string, string>, Record<string, unknown>, string]> = {
    HistoryRequest: [{ login: INT64_MAX }, { login: 9223372036854775807n }, ''],
    HistoryRequestByGroup: [{ mask: 'real\\*' }, { mask: 'real\\*' }, ''],
    DealRequest: [{ login: '7' }, { login: 7 }, ''],
    DealRequestByGroup: [{ mask: '*' }, { mask: '*' }, ''],
    DealRequestByGroupSymbol: [{ mask: '*', symbol: 'EURUSD,GBPUSD' }, { mask: '*', symbol: 'EURUSD,GBPUSD' }, ''],
    DealRequestByLogins: [{}, { logins: [3, 4] }, '?logins=3&logins=4'],
    ChartRequest: [{ symbol: 'EURUSD' }, { symbol: 'EURUSD' }, ''],
  };

  it('takes both bounds on the full route, toTime equal to fromTime included, a time without offset as UTC', () => {
    for (const [name, [path, args, query]] of Object.entries(KEYS)) {
      expect(call(name, { ...path, fromTime: '2024-04-01T08:00:00', toTime: T }, query), name).toStrictEqual(
        accepted({ ...args, fromTime: T, toTime: T }),
      );
    }
  });

  it('refuses a toTime one millisecond before fromTime on the full route', () => {
    for (const [name, [path, , query]] of Object.entries(KEYS)) {
      expect(call(name, { ...path, fromTime: T, toTime: BEFORE_T }, query), name).toStrictEqual(
        refused('toTime: toTime must not be before fromTime'),
      );
    }
  });

  it('refuses bounds that are not date-times, naming each, without calling them out of order', () => {
    expect(call('DealRequest', { login: '7', fromTime: 'monday', toTime: 'friday' })).toStrictEqual(
      refused('fromTime: fromTime must be an ISO 8601 date-time; toTime: toTime must be an ISO 8601 date-time'),
    );
    expect(call('DealRequest', { login: '7', fromTime: T, toTime: 'friday' })).toStrictEqual(
      refused('toTime: toTime must be an ISO 8601 date-time'),
    );
    expect(call('DealRequestSince', { login: '7', fromTime: 'monday' })).toStrictEqual(
      refused('fromTime: fromTime must be an ISO 8601 date-time'),
    );
  });

  it('takes fromTime alone on the Since route, leaving the end open', () => {
    for (const [name, [path, args, query]] of Object.entries(KEYS)) {
      expect(call(`${name}Since`, { ...path, fromTime: T, toTime: 'ignored' }, query), name).toStrictEqual(
        accepted({ ...args, fromTime: T }),
      );
    }
  });

  it('takes neither bound on the All route, leaving the window open at both ends', () => {
    for (const [name, [path, args, query]] of Object.entries(KEYS)) {
      expect(call(`${name}All`, { ...path, fromTime: 'ignored', toTime: 'ignored' }, query), name).toStrictEqual(
        accepted(args),
      );
    }
  });

  it('requires the bounds a route has', () => {
    expect(call('DealRequest', { login: '7', fromTime: T })).toStrictEqual(
      refused('toTime: Invalid input: expected string, received undefined'),
    );
    expect(call('DealRequestSince', { login: '7' })).toStrictEqual(
      refused('fromTime: Invalid input: expected string, received undefined'),
    );
  });

  it('declares no path parameters on the All route of a window without key segments', () => {
    expect(op('DealRequestByLoginsAll').params).toBeUndefined();
    expect(Object.keys(op('DealRequestByLoginsSince').params!.shape)).toStrictEqual(['fromTime']);
    expect(Object.keys(op('HistoryRequestAll').params!.shape)).toStrictEqual(['login']);
  });
});

// ---- passwords ---------------------------------------------------------------------------------------------------------

describe('v1 PF5 password calls', () => {
  it('takes the login, the password type Main or Investor, and the password as a JSON string of 1 to 256 characters', () => {
    for (const name of ['UserPasswordCheck', 'UserPasswordChange']) {
      expect(call(name, { login: '1001', type: 'Main' }, '', 'p'), name).toStrictEqual(
        accepted({ login: 1001, type: 'Main', body: 'p' }),
      );
      expect(call(name, { login: INT64_MAX, type: 'Investor' }, '', 'p'.repeat(256)), name).toStrictEqual(
        accepted({ login: 9223372036854775807n, type: 'Investor', body: 'p'.repeat(256) }),
      );
    }
  });

  it('refuses another password type, and a password that is not a string, empty, absent or over 256 characters', () => {
    for (const name of ['UserPasswordCheck', 'UserPasswordChange']) {
      expect(call(name, { login: '1', type: 'Owner' }, '', 'p'), name).toStrictEqual(
        refused('type: type must be one of Main, Investor'),
      );
      expect(call(name, { login: '1', type: 'investor' }, '', 'p'), name).toMatchObject({
        ok: true,
        args: { type: 'Investor' },
      });
      expect(call(name, { login: '1', type: 'Main' }, '', 1234), name).toStrictEqual(
        refused('body: the password must be a JSON string'),
      );
      expect(call(name, { login: '1', type: 'Main' }), name).toStrictEqual(
        refused('body: the password must be a JSON string'),
      );
      expect(call(name, { login: '1', type: 'Main' }, '', ''), name).toStrictEqual(
        refused('body: the password must not be empty'),
      );
      expect(call(name, { login: '1', type: 'Main' }, '', 'p'.repeat(257)), name).toStrictEqual(
        refused('body: the password must be at most 256 characters'),
      );
    }
  });

  it('sends the login, the type and the password to the manager', () => {
    for (const name of ['UserPasswordCheck', 'UserPasswordChange']) {
      const answer = op(name).answer as any;
      expect(answer, name).toStrictEqual({ kind: 'live', command: name, args: expect.any(Function) });
      expect(answer.args(argsOf(call(name, { login: '1001', type: 'Investor' }, '', 'pw1')))).toStrictEqual({
        login: 1001,
        type: 'Investor',
        password: 'pw1',
      });
    }
  });
});

// ---- ticket arrays ---------------------------------------------------------------------------------------------------

describe('v1 PF5 ticket arrays in bodies', () => {
  it('takes a JSON array of tickets exactly: numbers up to 2^53 − 1, bigints beyond, up to 2^63 − 1', () => {
    for (const name of TICKET_BATCHES) {
      const tickets = [1, 9007199254740991, 9007199254740992n, 9223372036854775807n];
      expect(call(name, {}, '', tickets), name).toStrictEqual(accepted({ body: tickets }));
    }
  });

  it('refuses a body that is not an array, and an empty array', () => {
    for (const name of TICKET_BATCHES) {
      expect(call(name, {}, '', { tickets: [1] }), name).toStrictEqual(
        refused('body: must be a JSON array of tickets'),
      );
      expect(call(name), name).toStrictEqual(refused('body: must be a JSON array of tickets'));
      expect(call(name, {}, '', []), name).toStrictEqual(refused('body: tickets must list at least one ticket'));
    }
  });

  it('names each bad ticket by its position and rule', () => {
    for (const name of TICKET_BATCHES) {
      expect(call(name, {}, '', [5, 0, 1.5, null, '7', 9223372036854775808n, 1e19]), name).toStrictEqual(
        refused(
          [
            'body.1: tickets item must be at least 1',
            'body.2: tickets item must be an integer',
            'body.3: tickets item is required',
            'body.4: tickets item must be an integer',
            `body.5: tickets item must be at most ${INT64_MAX}, written in digits`,
            `body.6: tickets item must be at most ${INT64_MAX}, written in digits`,
          ].join('; '),
        ),
      );
    }
  });

  it('takes 1000 tickets and refuses 1001; a ticket listed twice is asked for once', () => {
    const many = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(call('DealRequestByTickets', {}, '', many)).toStrictEqual(accepted({ body: many }));
    expect(call('DealRequestByTickets', {}, '', [...many, 1001])).toStrictEqual(
      refused('body: tickets must list at most 1000 tickets'),
    );
    expect(call('DealRequestByTickets', {}, '', [5, 3, 5])).toStrictEqual(accepted({ body: [5, 3] }));
  });

  it('sends the tickets to the manager command of the same name', () => {
    for (const name of TICKET_BATCHES) {
      const answer = op(name).answer as any;
      expect(answer, name).toStrictEqual({ kind: 'live', command: name, args: expect.any(Function) });
      expect(answer.args(argsOf(call(name, {}, '', [4, 9223372036854775807n]))), name).toStrictEqual({
        tickets: [4, 9223372036854775807n],
      });
    }
  });

  it('DealRequestByTicketsQuery: sends the query tickets to DealRequestByTickets', () => {
    const answer = op('DealRequestByTicketsQuery').answer as any;
    expect(answer).toStrictEqual({ kind: 'live', command: 'DealRequestByTickets', args: expect.any(Function) });
    expect(answer.args(argsOf(call('DealRequestByTicketsQuery', {}, '?tickets=8&tickets=9')))).toStrictEqual({
      tickets: [8, 9],
    });
  });
});

// ---- UserAdd ---------------------------------------------------------------------------------------------------------

describe('v1 PF5 UserAdd', () => {
  const add = (body: unknown) => call('UserAdd', {}, '', body);
  const base = { group: 'real\\usd', leverage: 100, firstName: 'Ann' };

  it('takes group, leverage and a first or last name; login, certificate and passwords may be absent or null', () => {
    expect(add(base)).toStrictEqual(accepted({ body: base }));
    expect(add({ group: 'g', leverage: 1, lastName: 'Lee' })).toStrictEqual(
      accepted({ body: { group: 'g', leverage: 1, lastName: 'Lee' } }),
    );
    const nulls = { ...base, login: null, certSerialNumber: null, password: null, passwordInvestor: null };
    expect(add(nulls)).toStrictEqual(accepted({ body: nulls }));
  });

  it('takes login and certSerialNumber from 0 (allocate) to 2^63 − 1, exactly', () => {
    expect(add({ ...base, login: 0, certSerialNumber: 0 })).toStrictEqual(
      accepted({ body: { ...base, login: 0, certSerialNumber: 0 } }),
    );
    expect(add({ ...base, login: 9223372036854775807n, certSerialNumber: 9007199254740992n })).toStrictEqual(
      accepted({ body: { ...base, login: 9223372036854775807n, certSerialNumber: 9007199254740992n } }),
    );
    expect(add({ ...base, login: -1, certSerialNumber: -1 })).toStrictEqual(
      refused('body.login: login must be at least 0; body.certSerialNumber: certSerialNumber must be at least 0'),
    );
    expect(add({ ...base, login: 9223372036854775808n })).toStrictEqual(
      refused(`body.login: login must be at most ${INT64_MAX}, written in digits`),
    );
  });

  it('requires group and leverage, each with its own message', () => {
    expect(add({ firstName: 'Ann' })).toStrictEqual(
      refused('body.group: group is required; body.leverage: leverage is required'),
    );
    expect(add({ ...base, group: '', leverage: '100' })).toStrictEqual(
      refused('body.group: group is required; body.leverage: leverage is required'),
    );
    expect(add({ ...base, group: 5 })).toStrictEqual(refused('body.group: group is required'));
  });

  it('takes a group of up to 64 characters and refuses 65', () => {
    expect(add({ ...base, group: 'g'.repeat(64) })).toStrictEqual(
      accepted({ body: { ...base, group: 'g'.repeat(64) } }),
    );
    expect(add({ ...base, group: 'g'.repeat(65) })).toStrictEqual(
      refused('body.group: group must be at most 64 characters'),
    );
  });

  it('takes a whole leverage from 1 to 2^31 − 1', () => {
    expect(add({ ...base, leverage: 2147483647 })).toStrictEqual(accepted({ body: { ...base, leverage: 2147483647 } }));
    expect(add({ ...base, leverage: 1.5 })).toStrictEqual(refused('body.leverage: leverage must be an integer'));
    expect(add({ ...base, leverage: 0 })).toStrictEqual(refused('body.leverage: leverage must be at least 1'));
    expect(add({ ...base, leverage: 2147483648 })).toStrictEqual(
      refused('body.leverage: leverage must be a 32-bit integer'),
    );
  });

  it('takes passwords of up to 256 characters, empty ones included, and refuses longer ones and non-strings', () => {
    const pw = { ...base, password: 'p'.repeat(256), passwordInvestor: '' };
    expect(add(pw)).toStrictEqual(accepted({ body: pw }));
    expect(add({ ...base, password: 'p'.repeat(257), passwordInvestor: 'q'.repeat(257) })).toStrictEqual(
      refused(
        'body.password: password must be at most 256 characters; body.passwordInvestor: passwordInvestor must be at most 256 characters',
      ),
    );
    expect(add({ ...base, password: 5, passwordInvestor: true })).toStrictEqual(
      refused('body.password: password must be a string; body.passwordInvestor: passwordInvestor must be a string'),
    );
  });

  it('requires a first or a last name with something besides blanks', () => {
    const noName = { group: 'g', leverage: 100 };
    const message = refused('body.firstName: firstName or lastName must be filled');
    expect(add(noName)).toStrictEqual(message);
    expect(add({ ...noName, firstName: '' })).toStrictEqual(message);
    expect(add({ ...noName, lastName: '' })).toStrictEqual(message);
    expect(add({ ...noName, firstName: ' ', lastName: '\t ' })).toStrictEqual(message);
    expect(add({ ...noName, firstName: null, lastName: null })).toStrictEqual(message);
    expect(add({ ...noName, firstName: ' ', lastName: 'Lee' })).toStrictEqual(
      accepted({ body: { ...noName, firstName: ' ', lastName: 'Lee' } }),
    );
    expect(add({ ...noName, firstName: 'A', lastName: '' })).toStrictEqual(
      accepted({ body: { ...noName, firstName: 'A', lastName: '' } }),
    );
  });

  it('refuses every field the server derives, and takes the writable ones', () => {
    for (const field of [
      'balance',
      'credit',
      'lastAccess',
      'lastPassChange',
      'lastIP',
      'balancePrevDay',
      'balancePrevMonth',
      'equityPrevDay',
      'equityPrevMonth',
      'commissionDaily',
      'commissionMonthly',
      'commissionAgentDaily',
      'commissionAgentMonthly',
    ]) {
      expect(add({ ...base, [field]: 1 }), field).toStrictEqual(refused(`body: Unrecognized key: "${field}"`));
    }
    const writable = { ...base, middleName: 'B', company: 'Acme', eMail: 'a@b.c', comment: 'vip', language: 9 };
    expect(add(writable)).toStrictEqual(accepted({ body: writable }));
  });

  it('sends the record without its null members to the manager', () => {
    const answer = op('UserAdd').answer as any;
    expect(answer).toStrictEqual({ kind: 'live', command: 'UserAdd', args: expect.any(Function) });
    const args = argsOf(
      add({ ...base, login: null, password: null, passwordInvestor: '', certSerialNumber: 0, lastName: '' }),
    );
    expect(answer.args(args)).toStrictEqual({
      record: { ...base, passwordInvestor: '', certSerialNumber: 0, lastName: '' },
    });
  });
});

// ---- UserUpdate, DealUpdate, SymbolUpdate ----------------------------------------------------------------------------

describe('v1 PF5 UserUpdate', () => {
  const update = (body: unknown) => call('UserUpdate', {}, '', body);

  it("takes an account record naming its login exactly, the server's own fields included", () => {
    expect(update({ login: 1 })).toStrictEqual(accepted({ body: { login: 1 } }));
    expect(update({ login: 9223372036854775807n, balance: 10, name: null })).toStrictEqual(
      accepted({ body: { login: 9223372036854775807n, balance: 10, name: null } }),
    );
  });

  it('refuses a record without a login, a login below 1 or past 2^63 − 1, and an unknown field', () => {
    expect(update({ name: 'x' })).toStrictEqual(refused('body.login: login is required'));
    expect(update({ login: 0 })).toStrictEqual(refused('body.login: login must be at least 1'));
    expect(update({ login: 9223372036854775808n })).toStrictEqual(
      refused(`body.login: login must be at most ${INT64_MAX}, written in digits`),
    );
    expect(update({ login: 5, password: 'x' })).toStrictEqual(refused('body: Unrecognized key: "password"'));
  });

  it('sends the record as given to the manager', () => {
    const answer = op('UserUpdate').answer as any;
    expect(answer).toStrictEqual({ kind: 'live', command: 'UserUpdate', args: expect.any(Function) });
    expect(answer.args(argsOf(update({ login: 5, name: null, city: 'Oslo' })))).toStrictEqual({
      record: { login: 5, name: null, city: 'Oslo' },
    });
  });
});

describe('v1 PF5 DealUpdate', () => {
  const update = (body: unknown) => call('DealUpdate', {}, '', body);

  it('takes a deal record naming its deal exactly', () => {
    expect(update({ deal: 1, comment: 'fixed' })).toStrictEqual(accepted({ body: { deal: 1, comment: 'fixed' } }));
    expect(update({ deal: 9223372036854775807n })).toStrictEqual(accepted({ body: { deal: 9223372036854775807n } }));
  });

  it('refuses a record without a deal, a deal below 1 or past 2^63 − 1, and an unknown field', () => {
    expect(update({ comment: 'x' })).toStrictEqual(refused('body.deal: deal is required'));
    expect(update({ deal: 0 })).toStrictEqual(refused('body.deal: deal must be at least 1'));
    expect(update({ deal: 9223372036854775808n })).toStrictEqual(
      refused(`body.deal: deal must be at most ${INT64_MAX}, written in digits`),
    );
    expect(update({ deal: 5, ticket: 5 })).toStrictEqual(refused('body: Unrecognized key: "ticket"'));
  });

  it('reads the deal by its ticket and writes the merged record', () => {
    const answer = op('DealUpdate').answer as any;
    expect(answer).toStrictEqual({
      kind: 'replace',
      dto: 'PF5Deal',
      read: { command: 'DealRequestByTicket', args: expect.any(Function) },
      write: { command: 'DealUpdate', args: expect.any(Function) },
    });
    const args = argsOf(update({ deal: 9223372036854775807n, comment: 'c' }));
    expect(answer.read.args(args)).toStrictEqual({ ticket: 9223372036854775807n });
    expect(answer.write.args(args, { deal: 1, comment: 'c', login: 7 })).toStrictEqual({
      record: { deal: 1, comment: 'c', login: 7 },
    });
  });
});

describe('v1 PF5 SymbolUpdate', () => {
  it('names the six fields it applies', () => {
    expect(SYMBOL_UPDATE_FIELDS).toStrictEqual([
      'execMode',
      'color',
      'stopsLevel',
      'spreadBalance',
      'spreadDiff',
      'spreadDiffBalance',
    ]);
  });

  it('takes the symbol of the path and a PF5Symbol body, refusing an unknown field', () => {
    expect(call('SymbolUpdate', { symbol: 'EURUSD' }, '', { spreadDiff: 2, digits: 5 })).toStrictEqual(
      accepted({ symbol: 'EURUSD', body: { spreadDiff: 2, digits: 5 } }),
    );
    expect(call('SymbolUpdate', { symbol: '' }, '', { spreadDiff: 2 })).toStrictEqual(
      refused('symbol: symbol must not be empty'),
    );
    expect(call('SymbolUpdate', { symbol: 'EURUSD' }, '', { spreadWidth: 2 })).toStrictEqual(
      refused('body: Unrecognized key: "spreadWidth"'),
    );
  });

  it('sends the symbol and only the six fields that are set, zeros included', () => {
    const answer = op('SymbolUpdate').answer as any;
    expect(answer).toStrictEqual({ kind: 'live', command: 'SymbolUpdate', args: expect.any(Function) });
    const args = argsOf(
      call('SymbolUpdate', { symbol: 'EURUSD' }, '', {
        execMode: 'Market',
        color: null,
        stopsLevel: 0,
        spreadBalance: -1,
        spreadDiff: 3,
        digits: 5,
        description: 'Euro',
      }),
    );
    expect(answer.args(args)).toStrictEqual({
      symbol: 'EURUSD',
      record: { execMode: 'Market', stopsLevel: 0, spreadBalance: -1, spreadDiff: 3 },
    });
    expect(answer.args(argsOf(call('SymbolUpdate', { symbol: 'X' }, '', { digits: 5 })))).toStrictEqual({
      symbol: 'X',
      record: {},
    });
  });
});
