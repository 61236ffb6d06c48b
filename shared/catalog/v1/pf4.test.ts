/**
 * The input rules of the v1 PF4 catalog entries (shared/catalog/v1/pf4.ts), checked through the edge's validation of
 * one call (`validateInputs`): every refusal with its exact message, the bounds on both sides, the exact arguments a
 * handler receives (defaults of the optional trailing segments, conversions of path and query text), and the parts
 * of each declaration the rest of the suite does not pin (time-out class, read kind, handler, scope, answer).
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../index.js';
import { validateInputs } from '../inputs.js';
import { CON_COMMON_SCHEMAS, CON_COMMON_SENSITIVE, tradeUpdateArgs } from './pf4.js';
import { commonV2 } from '../v2/common.js';
import { commonPf4, history, margins, prices, symbols, trades, users } from '../v2/pf4/index.js';

const op = (name: string): Operation => {
  const entry = findOperation(`v1.PF4.${name}`);
  if (!entry) throw new Error(`no v1 PF4 entry ${name}`);
  return entry;
};
/** One call of the v1 PF4 entry `name`: path segments, query text (`?a=1`) and, when given, a JSON body. */
const call = (name: string, path: Record<string, string> = {}, query = '', body?: unknown) =>
  validateInputs(
    op(name),
    path,
    new URL(`http://edge/x${query}`),
    body === undefined ? { kind: 'none' } : { kind: 'json', value: body },
  );
const accepted = (args: Record<string, unknown>) => ({ ok: true, args });
const refused = (message: string) => ({ ok: false, message });

const INT32_MAX = 2147483647;
const EPOCH = '1970-01-01T00:00:00.000Z';
const PF4_MAX_TIME = '2038-01-19T03:14:07.000Z';
const MISSING_TEXT = 'Invalid input: expected string, received undefined';
const MODES = 'Standard, Logins, Trades, Errors, Full, Updater, SendMail, Failover';
const MODE_MESSAGE = `mode: mode must be one of ${MODES} or its index 0 to 7`;

// ---- declarations ---------------------------------------------------------------------------------------------

/** name → [handler op, time-out class, read, mutating, tag]. The spec's T column gives the time-out classes. */
const DECLARED: Record<string, [string, string, string, boolean, string]> = {
  ManagerCommon: ['PF4.v1.ManagerCommon', 'read', 'live', false, 'PF4 Common'],
  ManagerCommonEx: ['PF4.v1.ManagerCommonEx', 'read', 'live', false, 'PF4 Common'],
  ServerTime: ['ServerTime', 'read', 'live', false, 'PF4 Common'],
  JournalRequest: ['PF4.JournalRequest', 'history', 'live', false, 'PF4 Common'],
  JournalRequestTo: ['PF4.JournalRequest', 'history', 'live', false, 'PF4 Common'],
  JournalRequestToMode: ['PF4.JournalRequest', 'history', 'live', false, 'PF4 Common'],
  JournalRequestToModeFilter: ['PF4.JournalRequest', 'history', 'live', false, 'PF4 Common'],
  TradesGet: ['PF4.TradesGet', 'read', 'cached', false, 'PF4 Trades'],
  TradesGetTicket: ['PF4.TradesGetTicket', 'read', 'cached', false, 'PF4 Trades'],
  TradeRecordsRequest: ['PF4.TradeRecordsRequest', 'read', 'live', false, 'PF4 Trades'],
  AdmTradesRequest: ['PF4.AdmTradesRequest', 'history', 'live', false, 'PF4 Trades'],
  TradesGetByLogin: ['PF4.TradesGetByLogin', 'read', 'cached', false, 'PF4 Trades'],
  AdmTradeRecordModify: ['PF4.v1.AdmTradeRecordModify', 'trade', 'live', true, 'PF4 Trades'],
  TradeTransaction: ['PF4.TradeTransaction', 'trade', 'live', true, 'PF4 Trades'],
  TradesUserHistory: ['PF4.TradesUserHistory', 'history', 'live', false, 'PF4 Trades'],
  TradesUserHistoryFrom: ['PF4.TradesUserHistory', 'history', 'live', false, 'PF4 Trades'],
  TradesUserHistoryFromTo: ['PF4.TradesUserHistory', 'history', 'live', false, 'PF4 Trades'],
  UsersGet: ['PF4.UsersGet', 'read', 'cached', false, 'PF4 Users'],
  UsersRequest: ['PF4.UsersRequest', 'read', 'live', false, 'PF4 Users'],
  UserRecordsRequest: ['PF4.UserRecordsRequest', 'read', 'live', false, 'PF4 Users'],
  UserRecordGet: ['PF4.UserRecordGet', 'read', 'cached', false, 'PF4 Users'],
  UserRecordNew: ['PF4.UserRecordNew', 'change', 'live', true, 'PF4 Users'],
  UserRecordUpdate: ['PF4.v1.UserRecordUpdate', 'change', 'live', true, 'PF4 Users'],
  MarginLevelGet: ['PF4.MarginLevelGet', 'read', 'cached', false, 'PF4 Users'],
  MarginLevelRequest: ['PF4.MarginLevelRequest', 'read', 'live', false, 'PF4 Users'],
  UserPasswordCheck: ['PF4.UserPasswordCheck', 'change', 'live', false, 'PF4 Users'],
  UserPasswordSet: ['PF4.UserPasswordSet', 'change', 'live', true, 'PF4 Users'],
  AdmBalanceCheck: ['PF4.AdmBalanceCheckLogin', 'read', 'live', false, 'PF4 Users'],
  AdmBalanceFix: ['PF4.v1.AdmBalanceFix', 'trade', 'live', true, 'PF4 Users'],
  SymbolsGetAll: ['PF4.v1.SymbolsGetAll', 'read', 'cached', false, 'PF4 Symbols'],
  CfgRequestSymbol: ['PF4.CfgRequestSymbolSymbol', 'read', 'live', false, 'PF4 Symbols'],
  CfgRequestSymbolGroup: ['PF4.CfgRequestSymbolGroup', 'read', 'live', false, 'PF4 Symbols'],
  SymbolInfoGet: ['PF4.SymbolInfoGet', 'read', 'cached', false, 'PF4 Symbols'],
  SymbolSessionsGet: ['PF4.SymbolSessionsGet', 'read', 'cached', false, 'PF4 Symbols'],
  SymbolChange: ['PF4.SymbolChange', 'change', 'live', true, 'PF4 Symbols'],
  SymbolsRefresh: ['PF4.SymbolsRefresh', 'maintenance', 'live', true, 'PF4 Symbols'],
  SymbolAdd: ['PF4.SymbolAdd', 'change', 'live', true, 'PF4 Market Watch'],
  SymbolHide: ['PF4.SymbolHide', 'change', 'live', true, 'PF4 Market Watch'],
  TickInfoLast: ['PF4.TickInfoLast', 'read', 'cached', false, 'PF4 Market Watch'],
  TickInfoLastSymbol: ['PF4.TickInfoLastSymbol', 'read', 'cached', false, 'PF4 Market Watch'],
  TicksRequest: ['PF4.TicksRequest', 'history', 'live', false, 'PF4 Ticks and Charts'],
  ChartRequest: ['PF4.ChartRequest', 'history', 'live', false, 'PF4 Ticks and Charts'],
};

/** The v2 entry whose handler (op and answer) each sharing v1 entry uses. */
const SHARED: Record<string, Operation> = {
  ServerTime: commonV2.ServerTime[0],
  JournalRequest: commonPf4.JournalRequest,
  JournalRequestTo: commonPf4.JournalRequest,
  JournalRequestToMode: commonPf4.JournalRequest,
  JournalRequestToModeFilter: commonPf4.JournalRequest,
  TradesGet: trades.TradesGet,
  TradesGetTicket: trades.TradesGetTicket,
  TradeRecordsRequest: trades.TradeRecordsRequest,
  AdmTradesRequest: trades.AdmTradesRequest,
  TradesGetByLogin: trades.TradesGetByLogin,
  TradeTransaction: trades.TradeTransaction,
  TradesUserHistory: history.TradesUserHistory,
  TradesUserHistoryFrom: history.TradesUserHistory,
  TradesUserHistoryFromTo: history.TradesUserHistory,
  UsersRequest: users.UsersRequest,
  UserRecordsRequest: users.UserRecordsRequest,
  UserRecordGet: users.UserRecordGet,
  UserRecordNew: users.UserRecordNew,
  MarginLevelGet: margins.MarginLevelGet,
  MarginLevelRequest: margins.MarginLevelRequest,
  UserPasswordCheck: users.UserPasswordCheck,
  UserPasswordSet: users.UserPasswordSet,
  AdmBalanceCheck: users.AdmBalanceCheckLogin,
  CfgRequestSymbol: symbols.CfgRequestSymbolSymbol,
  SymbolInfoGet: symbols.SymbolInfoGet,
  SymbolSessionsGet: symbols.SymbolSessionsGet,
  SymbolChange: symbols.SymbolChange,
  SymbolsRefresh: symbols.SymbolsRefresh,
  SymbolAdd: symbols.SymbolAdd,
  SymbolHide: symbols.SymbolHide,
  TickInfoLast: prices.TickInfoLast,
  TickInfoLastSymbol: prices.TickInfoLastSymbol,
  TicksRequest: prices.TicksRequest,
  ChartRequest: prices.ChartRequest,
};

describe('v1 PF4 declarations', () => {
  it("gives each entry its handler, the spec's time-out class, its read kind, its mutating flag, the scope that follows, and its tag", () => {
    for (const [name, [handler, timeout, read, mutating, tag]] of Object.entries(DECLARED)) {
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
        op: handler,
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

  it('answers a boolean where v1 answers true or false, and a date-time string for the server time', () => {
    for (const name of [
      'UserPasswordCheck',
      'UserPasswordSet',
      'AdmBalanceFix',
      'SymbolChange',
      'SymbolsRefresh',
      'SymbolAdd',
      'SymbolHide',
    ]) {
      expect(op(name).response, name).toStrictEqual({ type: 'boolean' });
    }
    expect(op('ServerTime').response).toStrictEqual({ type: 'string', format: 'date-time' });
  });

  it("answers a sharing entry with the v2 entry's own answer", () => {
    for (const [name, v2] of Object.entries(SHARED)) expect(op(name).answer, name).toBe(v2.answer);
  });

  it('takes the v2 bodies unchanged where v1 and v2 bodies are the same', () => {
    expect(op('TradeTransaction').body).toBe(trades.TradeTransaction.body);
    expect(op('UserRecordNew').body).toBe(users.UserRecordNew.body);
    expect(op('UserPasswordCheck').body).toBe(users.UserPasswordCheck.body);
    expect(op('UserPasswordSet').body).toBe(users.UserPasswordSet.body);
    expect(op('SymbolChange').body).toBe(symbols.SymbolChange.body);
  });

  it('declares the answers of the entries with a handler of their own', () => {
    expect(op('ManagerCommon').answer).toStrictEqual({ kind: 'custom' });
    expect(op('ManagerCommonEx').answer).toStrictEqual({ kind: 'custom' });
    expect(op('SymbolsGetAll').answer).toStrictEqual({ kind: 'custom' });
    expect(op('UsersGet').answer).toStrictEqual({ kind: 'cachedList', table: 'users' });
    expect(op('CfgRequestSymbolGroup').answer).toStrictEqual({ kind: 'live', command: 'CfgRequestSymbolGroup' });
  });

  it('takes no inputs on the entries without parameters', () => {
    for (const name of [
      'ManagerCommon',
      'ManagerCommonEx',
      'ServerTime',
      'TradesGet',
      'UsersGet',
      'UsersRequest',
      'CfgRequestSymbolGroup',
      'SymbolsRefresh',
      'TickInfoLast',
    ]) {
      const e = op(name);
      expect([e.params, e.query, e.body], name).toStrictEqual([undefined, undefined, undefined]);
      expect(call(name, {}, '?x=1'), name).toStrictEqual(accepted({}));
    }
  });
});

// ---- the common configuration records --------------------------------------------------------------------------

describe('v1 PF4 common configuration schemas', () => {
  const ALL = [
    'name',
    'owner',
    'build',
    'version',
    'timeZone',
    'daylightCorrection',
    'timeZoneReal',
    'timeSync',
    'minClient',
    'minApi',
    'keepEmails',
    'keepTicks',
    'antiFlood',
    'floodControl',
  ];
  const TEXT = ['name', 'owner', 'timeSync'];

  it('names the time source and the flood limits as the sensitive settings', () => {
    expect(CON_COMMON_SENSITIVE).toStrictEqual(['timeSync', 'antiFlood', 'floodControl']);
  });

  it("publishes ConCommon with every setting in the server's order, each typed and described, all required, nothing else", () => {
    const s = CON_COMMON_SCHEMAS.ConCommon as Record<string, any>;
    expect(Object.keys(s.properties)).toStrictEqual(ALL);
    expect(s.required).toStrictEqual(ALL);
    expect([s.type, s.additionalProperties]).toStrictEqual(['object', false]);
    expect(s.description).toMatch(/^The server's whole common configuration \(v1 ManagerCommonEx\)/);
    for (const f of ALL) {
      const { description, ...type } = s.properties[f];
      expect(type, f).toStrictEqual(
        TEXT.includes(f) ? { type: ['string', 'null'] } : { type: 'integer', format: 'int32' },
      );
      expect(description.length, f).toBeGreaterThan(5);
    }
    expect(s.properties.build.description).toBe('server build (read-only)');
    expect(s.properties.timeSync.description).toBe('time source (NTP server) the server synchronises its clock with');
  });

  it('publishes ConCommonShort as ConCommon without the sensitive settings, and says which it leaves out', () => {
    const s = CON_COMMON_SCHEMAS.ConCommonShort as Record<string, any>;
    const kept = ALL.filter((f) => !['timeSync', 'antiFlood', 'floodControl'].includes(f));
    expect(Object.keys(s.properties)).toStrictEqual(kept);
    expect(s.required).toStrictEqual(kept);
    expect([s.type, s.additionalProperties]).toStrictEqual(['object', false]);
    for (const f of kept)
      expect(s.properties[f]).toBe((CON_COMMON_SCHEMAS.ConCommon as Record<string, any>).properties[f]);
    expect(s.description).toBe(
      'The common configuration as the manager sees it (v1 ManagerCommon): ConCommon without the sensitive timeSync, antiFlood, floodControl.',
    );
  });
});

// ---- JournalRequest ---------------------------------------------------------------------------------------------

describe('v1 PF4 JournalRequest', () => {
  const from = '2024-03-01T10:00:00Z';

  it('takes from alone with mode Full (index 4) and no to or filter; a time without offset is UTC', () => {
    expect(call('JournalRequest', { from: '2024-03-01T10:00:00' })).toStrictEqual(
      accepted({ from: '2024-03-01T10:00:00.000Z', mode: 'Full' }),
    );
  });

  it('refuses a from that is not a date-time, naming from', () => {
    expect(call('JournalRequest', { from: 'yesterday' })).toStrictEqual(
      refused('from: from must be an ISO 8601 date-time'),
    );
  });

  it('takes to equal to from, and refuses to one millisecond before from', () => {
    expect(call('JournalRequestTo', { from, to: from })).toStrictEqual(
      accepted({ from: '2024-03-01T10:00:00.000Z', to: '2024-03-01T10:00:00.000Z', mode: 'Full' }),
    );
    expect(call('JournalRequestTo', { from, to: '2024-03-01T09:59:59.999Z' })).toStrictEqual(
      refused('to: to must not be before from'),
    );
    expect(call('JournalRequestToMode', { from, to: '2024-03-01T09:00:00Z', mode: 'Full' })).toStrictEqual(
      refused('to: to must not be before from'),
    );
  });

  it('reads mode by its EnLogType name or by its index 0 to 7, passing on the name', () => {
    const at = (mode: string) => call('JournalRequestToMode', { from, to: from, mode });
    const args = (mode: string) => accepted({ from: '2024-03-01T10:00:00.000Z', to: '2024-03-01T10:00:00.000Z', mode });
    expect(at('Trades')).toStrictEqual(args('Trades'));
    expect(at('Failover')).toStrictEqual(args('Failover'));
    expect(at('0')).toStrictEqual(args('Standard'));
    expect(at('4')).toStrictEqual(args('Full'));
    expect(at('7')).toStrictEqual(args('Failover'));
    expect(at('07')).toStrictEqual(args('Failover'));
  });

  it('refuses a mode that is neither a member name nor an index, with the list of members and the index range', () => {
    const at = (mode: string) => call('JournalRequestToMode', { from, to: from, mode });
    for (const bad of ['8', '10', 'Everything', '', ' 4', '4 ', '0x4', '4.0', '-1', 'SendMailFull1234']) {
      expect(at(bad), JSON.stringify(bad)).toStrictEqual(refused(MODE_MESSAGE));
    }
  });

  it('refuses a mode longer than 16 characters by its length', () => {
    expect(call('JournalRequestToMode', { from, to: from, mode: 'SendMailFull12345' })).toStrictEqual(
      refused('mode: mode must be at most 16 characters'),
    );
  });

  it('passes the filter of the four-segment route, and refuses an empty one', () => {
    expect(call('JournalRequestToModeFilter', { from, to: from, mode: '2', filter: 'login 1001' })).toStrictEqual(
      accepted({
        from: '2024-03-01T10:00:00.000Z',
        to: '2024-03-01T10:00:00.000Z',
        mode: 'Trades',
        filter: 'login 1001',
      }),
    );
    expect(call('JournalRequestToModeFilter', { from, to: from, mode: '2', filter: '' })).toStrictEqual(
      refused('filter: filter must not be empty'),
    );
  });

  it('requires every segment its route has: to, mode and filter take no default there', () => {
    expect(call('JournalRequestTo', { from })).toStrictEqual(refused(`to: ${MISSING_TEXT}`));
    expect(call('JournalRequestToMode', { from, to: from })).toStrictEqual(refused(`mode: ${MISSING_TEXT}`));
    expect(call('JournalRequestToModeFilter', { from, to: from, mode: 'Full' })).toStrictEqual(
      refused(`filter: ${MISSING_TEXT}`),
    );
  });

  it('ignores to and filter on the routes without those segments', () => {
    expect(call('JournalRequest', { from, to: '2000-01-01T00:00:00Z', filter: '' })).toStrictEqual(
      accepted({ from: '2024-03-01T10:00:00.000Z', mode: 'Full' }),
    );
    expect(call('JournalRequestTo', { from, to: from, filter: '' })).toStrictEqual(
      accepted({ from: '2024-03-01T10:00:00.000Z', to: '2024-03-01T10:00:00.000Z', mode: 'Full' }),
    );
    expect(call('JournalRequestToMode', { from, to: from, mode: '1', filter: '' })).toStrictEqual(
      accepted({ from: '2024-03-01T10:00:00.000Z', to: '2024-03-01T10:00:00.000Z', mode: 'Logins' }),
    );
  });
});

// ---- Trades --------------------------------------------------------------------------------------------------------

describe('v1 PF4 trade reads', () => {
  it('TradesGet/{ticket}: takes tickets 1 to 2^31 − 1 as numbers, refuses 0 and 2^31', () => {
    expect(call('TradesGetTicket', { ticket: '1' })).toStrictEqual(accepted({ ticket: 1 }));
    expect(call('TradesGetTicket', { ticket: String(INT32_MAX) })).toStrictEqual(accepted({ ticket: INT32_MAX }));
    expect(call('TradesGetTicket', { ticket: '0' })).toStrictEqual(refused('ticket: ticket must be at least 1'));
    expect(call('TradesGetTicket', { ticket: '2147483648' })).toStrictEqual(
      refused('ticket: ticket must be at most 2147483647'),
    );
  });

  it('TradeRecordsRequest: takes the repeated orders query as numbers, refuses none and an order out of range', () => {
    expect(call('TradeRecordsRequest', {}, '?orders=5&orders=2147483647')).toStrictEqual(
      accepted({ orders: [5, INT32_MAX] }),
    );
    expect(call('TradeRecordsRequest', {}, '?orders=0')).toStrictEqual(refused('orders.0: orders must be at least 1'));
    expect(call('TradeRecordsRequest', {}, '')).toStrictEqual(
      refused('orders: Invalid input: expected array, received undefined'),
    );
  });

  it('AdmTradesRequest: takes group and openOnly from the path, openOnly as a boolean', () => {
    expect(call('AdmTradesRequest', { group: 'demoforex', openOnly: 'false' })).toStrictEqual(
      accepted({ group: 'demoforex', openOnly: false }),
    );
    expect(call('AdmTradesRequest', { group: 'g'.repeat(16), openOnly: 'true' })).toStrictEqual(
      accepted({ group: 'g'.repeat(16), openOnly: true }),
    );
    expect(call('AdmTradesRequest', { group: 'g'.repeat(17), openOnly: 'yes' })).toStrictEqual(
      refused('group: group must be at most 16 characters; openOnly: must be true or false'),
    );
  });

  it('TradesGetByLogin: takes login and group from the path', () => {
    expect(call('TradesGetByLogin', { login: '1001', group: 'demo' })).toStrictEqual(
      accepted({ login: 1001, group: 'demo' }),
    );
    expect(call('TradesGetByLogin', { login: '0', group: '' })).toStrictEqual(
      refused('login: login must be at least 1; group: group must not be empty'),
    );
  });
});

describe('v1 PF4 AdmTradeRecordModify', () => {
  const modify = (body: unknown) => call('AdmTradeRecordModify', {}, '', body);

  it('takes a trade record naming its ticket in order, orders 1 to 2^31 − 1', () => {
    expect(modify({ order: 1 })).toStrictEqual(accepted({ body: { order: 1 } }));
    expect(modify({ order: INT32_MAX, sl: 0, tp: 0, comment: 'c'.repeat(31) })).toStrictEqual(
      accepted({ body: { order: INT32_MAX, sl: 0, tp: 0, comment: 'c'.repeat(31) } }),
    );
    expect(modify({ order: 5, sl: 1.2345, tp: 1.5, comment: null, login: 1001, volume: 100 })).toStrictEqual(
      accepted({ body: { order: 5, sl: 1.2345, tp: 1.5, comment: null, login: 1001, volume: 100 } }),
    );
  });

  it('refuses a record without a numeric order as missing the ticket', () => {
    expect(modify({})).toStrictEqual(refused('body.order: order (the ticket) is required'));
    expect(modify({ order: '5' })).toStrictEqual(refused('body.order: order (the ticket) is required'));
  });

  it('refuses an order that is not an integer, below 1 or above 2^31 − 1', () => {
    expect(modify({ order: 1.5 })).toStrictEqual(refused('body.order: order must be an integer'));
    expect(modify({ order: 0 })).toStrictEqual(refused('body.order: order must be at least 1'));
    expect(modify({ order: INT32_MAX + 1 })).toStrictEqual(refused('body.order: order must be at most 2147483647'));
  });

  it('refuses negative stops and a comment over 31 characters', () => {
    expect(modify({ order: 5, sl: -0.01 })).toStrictEqual(refused('body.sl: sl must be 0 or positive'));
    expect(modify({ order: 5, tp: -0.01 })).toStrictEqual(refused('body.tp: tp must be 0 or positive'));
    expect(modify({ order: 5, comment: 'c'.repeat(32) })).toStrictEqual(
      refused('body.comment: comment must be at most 31 characters'),
    );
  });

  it('refuses a field a trade record does not have', () => {
    expect(modify({ order: 5, colour: 1 })).toStrictEqual(refused('body: Unrecognized key: "colour"'));
  });

  it('writes the ticket and only the set PF4TradeUpdate fields of the record (the broker checks its login first)', () => {
    expect(op('AdmTradeRecordModify').answer).toStrictEqual({ kind: 'custom' });
    const r = modify({
      order: 7,
      sl: 1.1,
      tp: 0,
      comment: null,
      magic: 3,
      storage: 0,
      login: 1001,
      volume: 100,
      symbol: 'EURUSD',
    }) as any;
    expect(tradeUpdateArgs(r.args.body)).toStrictEqual({
      ticket: 7,
      record: { order: 7, sl: 1.1, tp: 0, magic: 3, storage: 0 },
    });
  });
});

// ---- TradesUserHistory ----------------------------------------------------------------------------------------------

describe('v1 PF4 TradesUserHistory', () => {
  it('takes login alone with the whole PF4 time range, the epoch to 2038-01-19T03:14:07Z', () => {
    expect(call('TradesUserHistory', { login: '1001' })).toStrictEqual(
      accepted({ login: 1001, fromTime: EPOCH, toTime: PF4_MAX_TIME }),
    );
  });

  it('refuses a login out of range', () => {
    expect(call('TradesUserHistory', { login: '0' })).toStrictEqual(refused('login: login must be at least 1'));
    expect(call('TradesUserHistoryFromTo', { login: '2147483648', fromTime: EPOCH, toTime: EPOCH })).toStrictEqual(
      refused('login: login must be at most 2147483647'),
    );
  });

  it('takes fromTime up to the latest PF4 time, to which toTime defaults, and refuses one second later', () => {
    expect(call('TradesUserHistoryFrom', { login: '1001', fromTime: '2024-01-01T00:00:00' })).toStrictEqual(
      accepted({ login: 1001, fromTime: '2024-01-01T00:00:00.000Z', toTime: PF4_MAX_TIME }),
    );
    expect(call('TradesUserHistoryFrom', { login: '1001', fromTime: PF4_MAX_TIME })).toStrictEqual(
      accepted({ login: 1001, fromTime: PF4_MAX_TIME, toTime: PF4_MAX_TIME }),
    );
    expect(call('TradesUserHistoryFrom', { login: '1001', fromTime: '2038-01-19T03:14:08Z' })).toStrictEqual(
      refused('toTime: toTime must not be before fromTime'),
    );
  });

  it('takes toTime equal to fromTime, refuses it one millisecond earlier, and refuses times that are not date-times', () => {
    const t = '2024-05-01T12:00:00.000Z';
    expect(call('TradesUserHistoryFromTo', { login: '7', fromTime: t, toTime: t })).toStrictEqual(
      accepted({ login: 7, fromTime: t, toTime: t }),
    );
    expect(
      call('TradesUserHistoryFromTo', { login: '7', fromTime: t, toTime: '2024-05-01T11:59:59.999Z' }),
    ).toStrictEqual(refused('toTime: toTime must not be before fromTime'));
    expect(call('TradesUserHistoryFromTo', { login: '7', fromTime: 'then', toTime: 'now' })).toStrictEqual(
      refused('fromTime: fromTime must be an ISO 8601 date-time; toTime: toTime must be an ISO 8601 date-time'),
    );
  });

  it('requires every time segment its route has', () => {
    expect(call('TradesUserHistoryFrom', { login: '7' })).toStrictEqual(refused(`fromTime: ${MISSING_TEXT}`));
    expect(call('TradesUserHistoryFromTo', { login: '7', fromTime: EPOCH })).toStrictEqual(
      refused(`toTime: ${MISSING_TEXT}`),
    );
  });
});

// ---- Users ------------------------------------------------------------------------------------------------------------

describe('v1 PF4 user inputs', () => {
  it('takes the login of the path as a number on every login route, refusing 0 and 2^31', () => {
    for (const name of ['UserRecordGet', 'MarginLevelGet', 'MarginLevelRequest', 'AdmBalanceCheck', 'AdmBalanceFix']) {
      expect(call(name, { login: '42' }), name).toStrictEqual(accepted({ login: 42 }));
      expect(call(name, { login: String(INT32_MAX) }), name).toStrictEqual(accepted({ login: INT32_MAX }));
      expect(call(name, { login: '0' }), name).toStrictEqual(refused('login: login must be at least 1'));
      expect(call(name, { login: '2147483648' }), name).toStrictEqual(
        refused('login: login must be at most 2147483647'),
      );
    }
  });

  it('UserRecordsRequest: takes the repeated logins query, refuses none and a login out of range', () => {
    expect(call('UserRecordsRequest', {}, '?logins=1&logins=2147483647')).toStrictEqual(
      accepted({ logins: [1, INT32_MAX] }),
    );
    expect(call('UserRecordsRequest', {}, '?logins=2147483648')).toStrictEqual(
      refused('logins.0: logins must be at most 2147483647'),
    );
    expect(call('UserRecordsRequest', {}, '')).toStrictEqual(
      refused('logins: Invalid input: expected array, received undefined'),
    );
  });

  it('UserPasswordCheck: takes the login and the password body', () => {
    expect(call('UserPasswordCheck', { login: '1001' }, '', 'secret1')).toStrictEqual(
      accepted({ login: 1001, body: 'secret1' }),
    );
    expect(call('UserPasswordCheck', { login: '0' }, '', 'secret1')).toStrictEqual(
      refused('login: login must be at least 1'),
    );
  });

  it('UserPasswordSet: takes the login, both flags as booleans when given, and the password body', () => {
    expect(
      call('UserPasswordSet', { login: '1001' }, '?changeInvestor=true&cleanPubkey=false', 'secret1'),
    ).toStrictEqual(accepted({ login: 1001, changeInvestor: true, cleanPubkey: false, body: 'secret1' }));
    expect(call('UserPasswordSet', { login: '1001' }, '', 'secret1')).toStrictEqual(
      accepted({ login: 1001, body: 'secret1' }),
    );
    expect(call('UserPasswordSet', { login: '1001' }, '?changeInvestor=1&cleanPubkey=yes', 'secret1')).toStrictEqual(
      refused('changeInvestor: must be true or false; cleanPubkey: must be true or false'),
    );
  });

  it('AdmBalanceFix: fixes the path login as a one-login list, reading by key', () => {
    const answer = op('AdmBalanceFix').answer as any;
    expect(answer).toStrictEqual({
      kind: 'live',
      command: 'AdmBalanceFix',
      keyedRead: true,
      args: expect.any(Function),
    });
    expect(answer.args((call('AdmBalanceFix', { login: '1001' }) as any).args)).toStrictEqual({ logins: [1001] });
  });
});

describe('v1 PF4 UserRecordUpdate', () => {
  const update = (body: unknown) => call('UserRecordUpdate', {}, '', body);

  it('takes an account record naming its login, logins 1 to 2^31 − 1, with group, name and leverage at their bounds', () => {
    expect(update({ login: 1 })).toStrictEqual(accepted({ body: { login: 1 } }));
    const record = {
      login: INT32_MAX,
      group: 'g'.repeat(16),
      name: 'n'.repeat(128),
      leverage: 10000,
      balance: 5,
      email: 'a@b.c',
    };
    expect(update(record)).toStrictEqual(accepted({ body: record }));
    expect(update({ login: 5, group: 'g', name: 'n', leverage: 1 })).toStrictEqual(
      accepted({ body: { login: 5, group: 'g', name: 'n', leverage: 1 } }),
    );
    expect(update({ login: 5, group: null, name: null })).toStrictEqual(
      accepted({ body: { login: 5, group: null, name: null } }),
    );
  });

  it('refuses a record without a numeric login', () => {
    expect(update({})).toStrictEqual(refused('body.login: login is required'));
    expect(update({ login: '5' })).toStrictEqual(refused('body.login: login is required'));
  });

  it('refuses a login that is not an integer, below 1 or above 2^31 − 1', () => {
    expect(update({ login: 2.5 })).toStrictEqual(refused('body.login: login must be an integer'));
    expect(update({ login: 0 })).toStrictEqual(refused('body.login: login must be at least 1'));
    expect(update({ login: INT32_MAX + 1 })).toStrictEqual(refused('body.login: login must be at most 2147483647'));
  });

  it('refuses an empty or over-long group or name', () => {
    expect(update({ login: 5, group: '', name: '' })).toStrictEqual(
      refused('body.group: group must not be empty; body.name: name must not be empty'),
    );
    expect(update({ login: 5, group: 'g'.repeat(17), name: 'n'.repeat(129) })).toStrictEqual(
      refused('body.group: group must be at most 16 characters; body.name: name must be at most 128 characters'),
    );
  });

  it('refuses a leverage below 1 or above 10000', () => {
    expect(update({ login: 5, leverage: 0 })).toStrictEqual(refused('body.leverage: leverage must be at least 1'));
    expect(update({ login: 5, leverage: 10001 })).toStrictEqual(
      refused('body.leverage: leverage must be at most 10000'),
    );
  });

  it('refuses a field an account record does not have', () => {
    expect(update({ login: 5, password: 'x' })).toStrictEqual(refused('body: Unrecognized key: "password"'));
  });

  it('reads and writes the account the body names, laying the PF4UserUpdate fields over it', () => {
    const answer = op('UserRecordUpdate').answer as any;
    expect(answer).toStrictEqual({
      kind: 'replace',
      dto: 'PF4UserUpdate',
      read: { command: 'UserRecordRequest', args: expect.any(Function) },
      write: { command: 'UserRecordUpdate', args: expect.any(Function) },
    });
    const args = (update({ login: 1001, name: 'Ann' }) as any).args;
    expect(answer.read.args(args)).toStrictEqual({ login: 1001 });
    expect(answer.write.args(args, { name: 'Ann' })).toStrictEqual({ login: 1001, record: { name: 'Ann' } });
  });
});

// ---- Symbols, market watch, ticks and charts -------------------------------------------------------------------------

describe('v1 PF4 symbol inputs', () => {
  const BY_SYMBOL = [
    'SymbolsGetAll',
    'CfgRequestSymbol',
    'SymbolInfoGet',
    'SymbolSessionsGet',
    'SymbolAdd',
    'SymbolHide',
    'TickInfoLastSymbol',
  ];

  it('takes a symbol of 1 to 12 characters on every symbol route, refusing an empty or a 13-character one', () => {
    for (const name of BY_SYMBOL) {
      expect(call(name, { symbol: 'EURUSD' }), name).toStrictEqual(accepted({ symbol: 'EURUSD' }));
      expect(call(name, { symbol: 'S'.repeat(12) }), name).toStrictEqual(accepted({ symbol: 'S'.repeat(12) }));
      expect(call(name, { symbol: '' }), name).toStrictEqual(refused('symbol: symbol must not be empty'));
      expect(call(name, { symbol: 'S'.repeat(13) }), name).toStrictEqual(
        refused('symbol: symbol must be at most 12 characters'),
      );
    }
  });
});

describe('v1 PF4 TicksRequest and ChartRequest', () => {
  const start = '2024-02-01T00:00:00Z';
  const iso = '2024-02-01T00:00:00.000Z';

  it('TicksRequest: takes symbol, start, end and flags from the path, the flags normalised', () => {
    expect(call('TicksRequest', { symbol: 'EURUSD', start, end: start, flags: 'Raw,Normal' })).toStrictEqual(
      accepted({ symbol: 'EURUSD', start: iso, end: iso, flags: 'Raw, Normal' }),
    );
  });

  it('TicksRequest: refuses an end before the start, bad flags and a long symbol', () => {
    expect(
      call('TicksRequest', { symbol: 'EURUSD', start, end: '2024-01-31T23:59:59.999Z', flags: 'All' }),
    ).toStrictEqual(refused('end: end must not be before start'));
    expect(call('TicksRequest', { symbol: 'S'.repeat(13), start, end: start, flags: 'Some' })).toStrictEqual(
      refused(
        'symbol: symbol must be at most 12 characters; flags: flags must be Raw, Normal, All or several of them joined by ", ", or the number of their bits (Raw 1, Normal 2)',
      ),
    );
  });

  it("TicksRequest: requires start, end and flags, the v2 query's optional fields", () => {
    expect(call('TicksRequest', { symbol: 'EURUSD' })).toStrictEqual(
      refused(`start: ${MISSING_TEXT}; end: ${MISSING_TEXT}; flags: ${MISSING_TEXT}`),
    );
  });

  it('ChartRequest: takes symbol, period, start, end and mode from the path', () => {
    expect(
      call('ChartRequest', { symbol: 'EURUSD', period: 'H1', start, end: '2024-02-02T00:00:00', mode: 'RangeIn' }),
    ).toStrictEqual(
      accepted({ symbol: 'EURUSD', period: 'H1', start: iso, end: '2024-02-02T00:00:00.000Z', mode: 'RangeIn' }),
    );
  });

  it('ChartRequest: refuses an end before the start', () => {
    expect(
      call('ChartRequest', { symbol: 'EURUSD', period: 'H1', start, end: '2024-01-31T00:00:00Z', mode: 'RangeIn' }),
    ).toStrictEqual(refused('end: end must not be before start'));
  });

  it('ChartRequest: requires period and mode, with no v2 default for the mode', () => {
    const r = call('ChartRequest', { symbol: 'EURUSD', start, end: start }) as { ok: false; message: string };
    expect(r.ok).toBe(false);
    expect(r.message.split('; ').map((m) => m.split(':')[0])).toStrictEqual(['period', 'mode']);
  });
});
