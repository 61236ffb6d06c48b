/**
 * v2 PF5 operations (ServerTime is declared once for both families in `../common.ts`).
 *
 * PF5 servers take merge patches natively (`UserRecord`, `GroupRecord`, `SymbolRecord` with `patch`), so the three
 * PATCH operations pass the validated patch through. The edge refuses members the server never lets a manager write,
 * naming the field: the record's identity (login, group name, symbol name), the account's server-derived figures
 * (money moves by deals, times are the server's), the symbol's read-only fields and the members whose setter the
 * manager interface does not implement (a group's `newsLang` and `commissions`, a symbol's sessions).
 *
 * The `*ByGroup/{mask}` lists are answered live, paged natively by ticket: the mask selects by the account's group,
 * which the cached positions, orders and deals do not carry, and the server pages the selection itself.
 */
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { groupName, login64, maskText, mergePatchBody, pageQuery, symbolName } from '../fields.js';
import { V2_PF5 as v2 } from './paths.js';

/** Account fields a manager cannot write: the login is the identity, the rest the server derives. */
const USER_IMMUTABLE = [
  'login', 'balance', 'credit', 'registration', 'lastAccess', 'lastPassChange', 'lastIP', 'balancePrevDay', 'balancePrevMonth',
  'equityPrevDay', 'equityPrevMonth', 'commissionDaily', 'commissionMonthly', 'commissionAgentDaily', 'commissionAgentMonthly',
] as const;
/** The group name is the identity; `newsLang` and `commissions` have no setter in the manager interface. */
const GROUP_IMMUTABLE = ['group', 'newsLang', 'commissions'] as const;
/** The symbol name is the identity; the digits of the currencies and `multiply` are read-only; sessions have no setter. */
const SYMBOL_IMMUTABLE = [
  'symbol', 'currencyBaseDigits', 'currencyProfitDigits', 'currencyMarginDigits', 'multiply', 'sessionQuote', 'sessionTrade',
] as const;

const byGroup = z.object({ mask: maskText });

export const pf5V2 = {
  TimeGet: defineOperation({
    name: 'TimeGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/TimeGet`,
    tag: 'Common', summary: 'Time configuration of the trading server (time zone, time server, daylight saving), read live.',
    response: 'PF5Time', timeout: 'read', read: 'live',
    answer: { kind: 'live', command: 'TimeGet' },
  }),
  ManagerCurrent: defineOperation({
    name: 'ManagerCurrent', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/ManagerCurrent`,
    tag: 'Managers', summary: 'The manager account the gateway is logged in as, with its rights (live).',
    response: 'PF5ConManager', timeout: 'read', read: 'live',
    answer: { kind: 'live', command: 'ManagerCurrent' },
  }),
  GroupGet: defineOperation({
    name: 'GroupGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/GroupGet/{group}`,
    tag: 'Groups', summary: 'Cached group, SMTP credentials stripped; not-found envelope when unknown.',
    params: z.object({ group: groupName }), response: 'PF5ConGroup', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'groups', key: 'group', what: 'group' },
  }),
  GroupRecord: defineOperation({
    name: 'GroupRecord', generation: 'v2', family: 'PF5', method: 'PATCH', path: `${v2}/GroupRecord/{group}`,
    tag: 'Groups', summary: 'Merge patch of a group (null removes a field); the name, newsLang and commissions cannot be changed; answers the updated group.',
    params: z.object({ group: groupName }), body: mergePatchBody('PF5ConGroup', { immutable: GROUP_IMMUTABLE }),
    response: 'PF5ConGroup', timeout: 'change', read: 'live', mutating: true,
    answer: { kind: 'patch', native: { command: 'GroupRecord', args: (a) => ({ group: a.group, patch: a.body }) } },
  }),
  UserGet: defineOperation({
    name: 'UserGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/UserGet/{login}`,
    tag: 'Users', summary: 'Cached user; not-found envelope when unknown.',
    params: z.object({ login: login64 }), response: 'PF5User', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
  }),
  UserRecord: defineOperation({
    name: 'UserRecord', generation: 'v2', family: 'PF5', method: 'PATCH', path: `${v2}/UserRecord/{login}`,
    tag: 'Users', summary: 'Merge patch of an account (null empties a field); the login and server-derived figures cannot be changed; answers the updated account.',
    params: z.object({ login: login64 }), body: mergePatchBody('PF5User', { immutable: USER_IMMUTABLE }),
    response: 'PF5User', timeout: 'change', read: 'live', mutating: true,
    answer: { kind: 'patch', native: { command: 'UserRecord', args: (a) => ({ login: a.login, patch: a.body }) } },
  }),
  SymbolGet: defineOperation({
    name: 'SymbolGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/SymbolGet/{symbol}`,
    tag: 'Symbols', summary: 'Cached symbol; not-found envelope when unknown.',
    params: z.object({ symbol: symbolName }), response: 'PF5Symbol', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'symbols', key: 'symbol', what: 'symbol' },
  }),
  SymbolRecord: defineOperation({
    name: 'SymbolRecord', generation: 'v2', family: 'PF5', method: 'PATCH', path: `${v2}/SymbolRecord/{symbol}`,
    tag: 'Symbols', summary: 'Merge patch of a symbol (null removes a field); the name, read-only fields and sessions cannot be changed; answers the updated symbol.',
    params: z.object({ symbol: symbolName }), body: mergePatchBody('PF5Symbol', { immutable: SYMBOL_IMMUTABLE }),
    response: 'PF5Symbol', timeout: 'change', read: 'live', mutating: true,
    answer: { kind: 'patch', native: { command: 'SymbolRecord', args: (a) => ({ symbol: a.symbol, patch: a.body }) } },
  }),
  PositionByGroup: defineOperation({
    name: 'PositionByGroup', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/PositionByGroup/{mask}`,
    tag: 'Trades', summary: 'Open positions of the accounts in the groups the mask selects, live, paged by ticket ascending.',
    params: byGroup, query: z.object(pageQuery), response: 'PF5Position[]', timeout: 'read', read: 'live', paged: { key: 'position' },
    answer: { kind: 'livePage', command: 'PositionByGroup', native: true },
  }),
  OrderByGroup: defineOperation({
    name: 'OrderByGroup', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/OrderByGroup/{mask}`,
    tag: 'Trades', summary: 'Open orders of the accounts in the groups the mask selects, live, paged by ticket ascending.',
    params: byGroup, query: z.object(pageQuery), response: 'PF5Order[]', timeout: 'read', read: 'live', paged: { key: 'order' },
    answer: { kind: 'livePage', command: 'OrderByGroup', native: true },
  }),
  DealByGroup: defineOperation({
    name: 'DealByGroup', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/DealByGroup/{mask}`,
    tag: 'Trades', summary: 'Deals of the accounts in the groups the mask selects, live, paged by ticket ascending.',
    params: byGroup, query: z.object(pageQuery), response: 'PF5Deal[]', timeout: 'history', read: 'live', paged: { key: 'deal' },
    answer: { kind: 'livePage', command: 'DealByGroup', native: true },
  }),
};
