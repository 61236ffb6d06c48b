/**
 * v1 PF4 operations: the bare record or list on success, HTTP status errors (workers/envelope). Where v1 does what a
 * v2 operation does with the same arguments, the entry shares the v2 entry's handler (`shares`: its `op` and answer),
 * so one handler serves both generations; the coverage test checks that such an entry's argument names are the v2
 * entry's. Where only the inputs differ (a login in the path instead of a query list, the key inside the body instead
 * of the path), the entry has its own answer of the generic kinds with an argument mapper and its own op
 * (`PF4.v1.<name>`). Only the common-configuration records and the cached symbol record have handlers of their own
 * (broker/handlers/custom/v1Pf4.ts).
 *
 * Optional trailing path segments are one route per arity, each with the segments it has and the defaults of the
 * rest (`JournalRequest/{from}`, `JournalRequest/{from}/{to}`, ...). v1 has no paging, envelope, `confirm` or
 * Idempotency-Key.
 */
import { z } from 'zod';
import { defineOperation, type Operation } from '../operation.js';
import type { Answer } from '../answer.js';
import {
  booleanQuery,
  contractBody,
  dateTimeText,
  groupName,
  int32List,
  login32,
  symbolName,
  ticket32,
} from '../fields.js';
import { EnLogTypeMembers, openapiComponents } from '../../records/contract.js';
import { commonV2 } from '../v2/common.js';
import { commonPf4, history, margins, prices, symbols, trades, users } from '../v2/pf4/index.js';

const v1 = '/api/PF4/{tradePlatform}';
const INT32_MAX = 2147483647;

/** The v2 entry whose handler a v1 entry shares: its op and its answer (the arguments must be the same). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the v1 entry's arguments are the v2 entry's, whatever their type
function shares(entry: Operation): { op: string; answer: Answer<any> } {
  if (!entry.answer) throw new Error(`${entry.id} has no answer to share`);
  return { op: entry.op, answer: entry.answer };
}

/** A field of a v2 entry's query schema, to parse a v1 path segment exactly as v2 parses the query value. */
function v2QueryField(entry: Operation, name: string): z.ZodType {
  const field = entry.query?.shape[name] as z.ZodType | undefined;
  if (!field) throw new Error(`${entry.id} has no query field ${name}`);
  // Optional and default wrappers come off: a path segment is present when its route has it.
  let inner = field;
  while (inner._zod.def.type === 'optional' || inner._zod.def.type === 'default')
    inner = (inner as z.ZodOptional | z.ZodDefault).unwrap() as z.ZodType;
  return inner;
}

// ---- The server's common configuration: ConCommon and ConCommonShort ---------------------------------------------

const int32 = (description: string) => ({ type: 'integer', format: 'int32', description });
const text = (description: string) => ({ type: ['string', 'null'], description });

/** Fields of ConCommon, in the server's order: the PF4Common summary, then every setting CfgUpdateCommon stores. */
const CON_COMMON_FIELDS: Record<string, Record<string, unknown>> = {
  name: text('server name'),
  owner: text('owner (company) name'),
  build: int32('server build (read-only)'),
  version: int32('server version (read-only)'),
  timeZone: int32('time zone of server time, hours from UTC'),
  daylightCorrection: int32('daylight saving correction applied (1) or not (0)'),
  timeZoneReal: int32('time zone of the host, hours from UTC'),
  timeSync: text('time source (NTP server) the server synchronises its clock with'),
  minClient: int32('oldest client terminal build allowed to connect'),
  minApi: int32('oldest manager API build allowed to connect'),
  keepEmails: int32('days internal mail is kept'),
  keepTicks: int32('days tick history is kept'),
  antiFlood: int32('anti-flood protection on (1) or off (0)'),
  floodControl: int32('connections per minute from one address above which the address is blocked'),
};

/** Settings of the common configuration the manager's own view leaves out: the time source host, the flood limits. */
export const CON_COMMON_SENSITIVE = ['timeSync', 'antiFlood', 'floodControl'] as const;

function conCommonSchema(fields: string[], description: string): Record<string, unknown> {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    required: fields,
    properties: Object.fromEntries(fields.map((f) => [f, CON_COMMON_FIELDS[f]])),
  };
}

/** JSON Schemas of the two v1 records of the common configuration (published in the OpenAPI components). */
export const CON_COMMON_SCHEMAS: Record<'ConCommon' | 'ConCommonShort', Record<string, unknown>> = {
  ConCommon: conCommonSchema(
    Object.keys(CON_COMMON_FIELDS),
    "The server's whole common configuration (v1 ManagerCommonEx), sensitive settings included: the PF4Common summary, then every setting CfgUpdateCommon stores.",
  ),
  ConCommonShort: conCommonSchema(
    Object.keys(CON_COMMON_FIELDS).filter((f) => !(CON_COMMON_SENSITIVE as readonly string[]).includes(f)),
    `The common configuration as the manager sees it (v1 ManagerCommon): ConCommon without the sensitive ${CON_COMMON_SENSITIVE.join(', ')}.`,
  ),
};

// ---- Inputs -----------------------------------------------------------------------------------------------------

/** An EnLogType in a path segment: its name in any case (`Full`, `full`) or its index (`4`), passed on as the name. */
const logMode = z
  .string()
  .max(16, 'mode must be at most 16 characters')
  .transform((v, ctx) => {
    const byIndex = /^\d+$/.test(v) ? EnLogTypeMembers[Number(v)] : undefined;
    const mode = byIndex ?? EnLogTypeMembers.find((m) => m.toLowerCase() === v.toLowerCase());
    if (mode) return mode;
    ctx.addIssue({
      code: 'custom',
      message: `mode must be one of ${EnLogTypeMembers.join(', ')} or its index 0 to ${EnLogTypeMembers.length - 1}`,
    });
    return z.NEVER;
  });

/** JournalRequest's segments: from, then optionally to (default: the server's time), mode (default 4 = Full), filter. */
function journalParams(segments: number) {
  const to = v2QueryField(commonPf4.JournalRequest, 'to');
  return z
    .object({
      from: dateTimeText('from'),
      ...(segments >= 2 ? { to } : {}),
      mode: segments >= 3 ? logMode : logMode.default('Full'),
      ...(segments >= 4 ? { filter: v2QueryField(commonPf4.JournalRequest, 'filter') } : {}),
    })
    .superRefine((p: Record<string, unknown>, ctx) => {
      if (typeof p.to === 'string' && Date.parse(p.to) < Date.parse(p.from as string))
        ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
    });
}

const JOURNAL_SUMMARY =
  "Server journal lines of the `mode` type (EnLogType name or index; default 4 = Full, every line) from `from` to `to` (default: the server's time), only those containing `filter` (case-insensitive; default: every line), live; needs the logs right.";

function journalRequest(name: string, segments: number) {
  const path = ['{from}', '{to}', '{mode}', '{filter}'].slice(0, segments).join('/');
  return defineOperation({
    name,
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/JournalRequest/${path}`,
    tag: 'PF4 Common',
    summary: JOURNAL_SUMMARY,
    params: journalParams(segments),
    response: 'PF4ServerLog[]',
    timeout: 'history',
    read: 'live',
    ...shares(commonPf4.JournalRequest),
  });
}

/** PF4 times are 32-bit seconds: the earliest and the latest a history window can name. */
const PF4_EPOCH = '1970-01-01T00:00:00.000Z';
const PF4_MAX_TIME = '2038-01-19T03:14:07.000Z';

/** TradesUserHistory's segments: login, then optionally fromTime (default the epoch) and toTime (default the maximum). */
function historyParams(segments: number) {
  const fromTime = v2QueryField(history.TradesUserHistory, 'fromTime');
  const toTime = v2QueryField(history.TradesUserHistory, 'toTime');
  return z
    .object({
      login: login32,
      fromTime: segments >= 2 ? fromTime : fromTime.default(PF4_EPOCH),
      toTime: segments >= 3 ? toTime : toTime.default(PF4_MAX_TIME),
    })
    .superRefine((p, ctx) => {
      if (Date.parse(p.toTime as string) < Date.parse(p.fromTime as string))
        ctx.addIssue({ code: 'custom', path: ['toTime'], message: 'toTime must not be before fromTime' });
    });
}

function tradesUserHistory(name: string, segments: number) {
  const path = ['{login}', '{fromTime}', '{toTime}'].slice(0, segments).join('/');
  return defineOperation({
    name,
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TradesUserHistory/${path}`,
    tag: 'PF4 Trades',
    summary: `The account's closed and deleted trades and balance / credit entries closed in fromTime..toTime (UTC; absent times: the epoch to the latest PF4 time, ${PF4_MAX_TIME}), oldest first, live; an unknown login is 404.`,
    params: historyParams(segments),
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    ...shares(history.TradesUserHistory),
  });
}

/** A start..end window of path segments parsed as the v2 query of `entry` parses them; end not before start. */
function windowParams(entry: Operation, names: readonly string[]) {
  return z
    .object({ symbol: symbolName, ...Object.fromEntries(names.map((n) => [n, v2QueryField(entry, n)])) })
    .superRefine((p: Record<string, unknown>, ctx) => {
      if (Date.parse(p.end as string) < Date.parse(p.start as string))
        ctx.addIssue({ code: 'custom', path: ['end'], message: 'end must not be before start' });
    });
}

/** Fields of a contract record that are set, of those `fields` names. */
function picked(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (record[f] !== undefined && record[f] !== null) out[f] = record[f];
  return out;
}
const propertiesOf = (name: string) =>
  Object.keys((openapiComponents as Record<string, { properties: object }>)[name].properties);
const TRADE_UPDATE_FIELDS = propertiesOf('PF4TradeUpdate');

/** What `AdmTradeRecordModify` sends for a trade record: the ticket it names and only its set PF4TradeUpdate fields. */
export function tradeUpdateArgs(body: Record<string, unknown>): { ticket: number; record: Record<string, unknown> } {
  return { ticket: body.order as number, record: picked(body, TRADE_UPDATE_FIELDS) };
}

/**
 * A trade record as read (PF4Trade, or just its PF4TradeUpdate fields) naming its ticket in `order`: stops not
 * negative, the comment within the platform's 31 characters.
 */
const tradeRecordBody = (contractBody('PF4Trade') as z.ZodObject).extend({
  order: z
    .number({ error: () => 'order (the ticket) is required' })
    .int('order must be an integer')
    .min(1, 'order must be at least 1')
    .max(INT32_MAX, `order must be at most ${INT32_MAX}`),
  sl: z.number().min(0, 'sl must be 0 or positive').optional(),
  tp: z.number().min(0, 'tp must be 0 or positive').optional(),
  comment: z.string().max(31, 'comment must be at most 31 characters').nullable().optional(),
});

/**
 * An account record as read (PF4User) naming its login: group, name and leverage as an account needs them. Only the
 * PF4UserUpdate fields are written; the rest (registration and last dates, last IP, previous balances and equities)
 * are the server's.
 */
const userRecordBody = (contractBody('PF4User') as z.ZodObject).extend({
  login: z
    .number({ error: () => 'login is required' })
    .int('login must be an integer')
    .min(1, 'login must be at least 1')
    .max(INT32_MAX, `login must be at most ${INT32_MAX}`),
  group: z
    .string()
    .min(1, 'group must not be empty')
    .max(16, 'group must be at most 16 characters')
    .nullable()
    .optional(),
  name: z
    .string()
    .min(1, 'name must not be empty')
    .max(128, 'name must be at most 128 characters')
    .nullable()
    .optional(),
  leverage: z
    .number()
    .int()
    .min(1, 'leverage must be at least 1')
    .max(10000, 'leverage must be at most 10000')
    .optional(),
});

const loginPath = z.object({ login: login32 });
const symbolPath = z.object({ symbol: symbolName });

export const pf4V1 = {
  // ---- Common -------------------------------------------------------------------------------------------------
  ManagerCommon: defineOperation({
    name: 'ManagerCommon',
    op: 'PF4.v1.ManagerCommon',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/ManagerCommon`,
    tag: 'PF4 Common',
    summary:
      'The common configuration as the manager sees it (ConCommonShort: without the time source and flood limits), live.',
    response: 'ConCommonShort',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  ManagerCommonEx: defineOperation({
    name: 'ManagerCommonEx',
    op: 'PF4.v1.ManagerCommonEx',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/ManagerCommonEx`,
    tag: 'PF4 Common',
    summary: 'The whole common configuration, sensitive settings included (ConCommon), live.',
    response: 'ConCommon',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  ServerTime: defineOperation({
    name: 'ServerTime',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/ServerTime`,
    tag: 'PF4 Common',
    summary: 'Trading server time (live), a date-time string.',
    response: { type: 'string', format: 'date-time' },
    timeout: 'read',
    read: 'live',
    ...shares(commonV2.ServerTime[0]),
  }),
  JournalRequest: journalRequest('JournalRequest', 1),
  JournalRequestTo: journalRequest('JournalRequestTo', 2),
  JournalRequestToMode: journalRequest('JournalRequestToMode', 3),
  JournalRequestToModeFilter: journalRequest('JournalRequestToModeFilter', 4),

  // ---- Trades -------------------------------------------------------------------------------------------------
  TradesGet: defineOperation({
    name: 'TradesGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TradesGet`,
    tag: 'PF4 Trades',
    summary: 'Every open trade and pending order from the cache, by ticket.',
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    ...shares(trades.TradesGet),
  }),
  TradesGetTicket: defineOperation({
    name: 'TradesGetTicket',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TradesGet/{ticket}`,
    tag: 'PF4 Trades',
    summary: 'One open trade from the cache; 404 when the ticket is not open.',
    params: z.object({ ticket: ticket32 }),
    response: 'PF4Trade',
    timeout: 'read',
    read: 'cached',
    ...shares(trades.TradesGetTicket),
  }),
  TradeRecordsRequest: defineOperation({
    name: 'TradeRecordsRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TradeRecordsRequest`,
    tag: 'PF4 Trades',
    summary:
      'The open trades among the tickets `orders` (repeated), read live in one request; tickets not open are left out.',
    query: z.object({ orders: int32List('orders') }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'live',
    ...shares(trades.TradeRecordsRequest),
  }),
  AdmTradesRequest: defineOperation({
    name: 'AdmTradesRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/AdmTradesRequest/{group}/{openOnly}`,
    tag: 'PF4 Trades',
    summary:
      "Trades of the group's accounts, live: open ones by ticket, then with openOnly false their closed trades oldest first; an unknown group is 404; needs admin rights.",
    params: z.object({ group: groupName, openOnly: booleanQuery }),
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    ...shares(trades.AdmTradesRequest),
  }),
  TradesGetByLogin: defineOperation({
    name: 'TradesGetByLogin',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TradesGetByLogin/{login}/{group}`,
    tag: 'PF4 Trades',
    summary:
      'Open trades and pending orders of the account from the cache, by ticket; the account must be in `group` (case-sensitive), else 404.',
    params: z.object({ login: login32, group: groupName }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    ...shares(trades.TradesGetByLogin),
  }),
  AdmTradeRecordModify: defineOperation({
    name: 'AdmTradeRecordModify',
    op: 'PF4.v1.AdmTradeRecordModify',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/AdmTradeRecordModify`,
    tag: 'PF4 Trades',
    summary:
      "Administrator's direct edit of the open trade the body's `order` names, without market checks: the body is a trade record (as read, or just its PF4TradeUpdate fields); its sl, tp, magic, comment, commission and storage are written, the rest is the server's; answers the trade; an unknown ticket, or a `login` that is not the ticket's, is 404; needs admin rights.",
    body: tradeRecordBody,
    response: 'PF4Trade',
    timeout: 'trade',
    read: 'live',
    mutating: true,
    // Custom: a record naming its account (`login`) has the ticket read first, and another account's is refused.
    answer: { kind: 'custom' },
  }),
  TradeTransaction: defineOperation({
    name: 'TradeTransaction',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/TradeTransaction`,
    tag: 'PF4 Trades',
    summary:
      'One trade transaction on behalf of the manager (open, close, modify, delete, activate an order; balance or credit entry); answers the transaction as executed: `order` the ticket it made or acted on, `price` the executed price (the amount for balance and credit).',
    body: trades.TradeTransaction.body,
    response: 'PF4TradeTransaction',
    timeout: 'trade',
    read: 'live',
    mutating: true,
    ...shares(trades.TradeTransaction),
  }),
  TradesUserHistory: tradesUserHistory('TradesUserHistory', 1),
  TradesUserHistoryFrom: tradesUserHistory('TradesUserHistoryFrom', 2),
  TradesUserHistoryFromTo: tradesUserHistory('TradesUserHistoryFromTo', 3),

  // ---- Users --------------------------------------------------------------------------------------------------
  UsersGet: defineOperation({
    name: 'UsersGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/UsersGet`,
    tag: 'PF4 Users',
    summary: 'Every account from the cache, by login, secrets stripped.',
    response: 'PF4User[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'users' },
  }),
  UsersRequest: defineOperation({
    name: 'UsersRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/UsersRequest`,
    tag: 'PF4 Users',
    summary: 'Every account read live from the server, by login.',
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    ...shares(users.UsersRequest),
  }),
  UserRecordsRequest: defineOperation({
    name: 'UserRecordsRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/UserRecordsRequest`,
    tag: 'PF4 Users',
    summary:
      'The accounts `logins` (repeated; at least one, else 400) read live in one request; unknown logins are left out.',
    query: z.object({ logins: int32List('logins') }),
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    ...shares(users.UserRecordsRequest),
  }),
  UserRecordGet: defineOperation({
    name: 'UserRecordGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/UserRecordGet/{login}`,
    tag: 'PF4 Users',
    summary: 'One account from the cache; 404 when not cached.',
    params: loginPath,
    response: 'PF4User',
    timeout: 'read',
    read: 'cached',
    ...shares(users.UserRecordGet),
  }),
  UserRecordNew: defineOperation({
    name: 'UserRecordNew',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/UserRecordNew`,
    tag: 'PF4 Users',
    summary:
      'Creates an account (UserRecordNew = PF4UserCreate); login 0 or absent lets the server assign the next free one; answers the account.',
    body: users.UserRecordNew.body,
    response: 'PF4User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    ...shares(users.UserRecordNew),
  }),
  UserRecordUpdate: defineOperation({
    name: 'UserRecordUpdate',
    op: 'PF4.v1.UserRecordUpdate',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/UserRecordUpdate`,
    tag: 'PF4 Users',
    summary:
      "Updates the account the body's `login` names: the body is the account record (UserRecord = PF4User, as read); the account is read live, the record's PF4UserUpdate fields laid over it and written back (registration, last dates, last IP, previous balances and secrets stay the server's; balance and credit move only by transactions); answers the account; an unknown login is 404.",
    body: userRecordBody,
    response: 'PF4User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      dto: 'PF4UserUpdate',
      read: { command: 'UserRecordRequest', args: (a) => ({ login: a.body.login }) },
      write: { command: 'UserRecordUpdate', args: (a, record) => ({ login: a.body.login, record }) },
    },
  }),
  MarginLevelGet: defineOperation({
    name: 'MarginLevelGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/MarginLevelGet/{login}`,
    tag: 'PF4 Users',
    summary: 'Margin level of the account from the cache; 404 when the account has no open trades or pending orders.',
    params: loginPath,
    response: 'PF4MarginLevel',
    timeout: 'read',
    read: 'cached',
    ...shares(margins.MarginLevelGet),
  }),
  MarginLevelRequest: defineOperation({
    name: 'MarginLevelRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/MarginLevelRequest/{login}`,
    tag: 'PF4 Users',
    summary: 'Margin level of the account computed now by the server (live); an unknown login is 404.',
    params: loginPath,
    response: 'PF4MarginLevel',
    timeout: 'read',
    read: 'live',
    ...shares(margins.MarginLevelRequest),
  }),
  UserPasswordCheck: defineOperation({
    name: 'UserPasswordCheck',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/UserPasswordCheck/{login}`,
    tag: 'PF4 Users',
    summary:
      "true when the server accepts the password (the body, a JSON string; main or investor); a wrong password or unknown login is 400 PF4API InvalidData; needs the write scope, and past the broker's bound of failed checks of a login, 429 TooFrequent with Retry-After.",
    params: loginPath,
    body: users.UserPasswordCheck.body,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    passwordCheck: { login: 'login' },
    ...shares(users.UserPasswordCheck),
  }),
  UserPasswordSet: defineOperation({
    name: 'UserPasswordSet',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/UserPasswordSet/{login}`,
    tag: 'PF4 Users',
    summary:
      'Sets the main password (the body, a JSON string), or the investor one with changeInvestor; cleanPubkey also resets the public key; true when set.',
    params: loginPath,
    query: z.object({ changeInvestor: booleanQuery.optional(), cleanPubkey: booleanQuery.optional() }),
    body: users.UserPasswordSet.body,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    ...shares(users.UserPasswordSet),
  }),
  AdmBalanceCheck: defineOperation({
    name: 'AdmBalanceCheck',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/AdmBalanceCheck/{login}`,
    tag: 'PF4 Users',
    summary:
      "Difference between the account's balance and the one its history explains (0: intact); an unknown login is 404; needs admin rights.",
    params: loginPath,
    response: 'PF4BalanceDiff',
    timeout: 'read',
    read: 'live',
    ...shares(users.AdmBalanceCheckLogin),
  }),
  AdmBalanceFix: defineOperation({
    name: 'AdmBalanceFix',
    op: 'PF4.v1.AdmBalanceFix',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/AdmBalanceFix/{login}`,
    tag: 'PF4 Users',
    summary:
      "Writes the balance the account's history explains to the account (the path login); true when done; an unknown login is 404; needs admin rights.",
    params: loginPath,
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'AdmBalanceFix', args: (a) => ({ logins: [a.login] }), keyedRead: true },
  }),

  // ---- Symbols ------------------------------------------------------------------------------------------------
  SymbolsGetAll: defineOperation({
    name: 'SymbolsGetAll',
    op: 'PF4.v1.SymbolsGetAll',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolsGetAll/{symbol}`,
    tag: 'PF4 Symbols',
    summary:
      'The configuration of an active symbol from the cache (the symbols the server pumps); 404 when the symbol is hidden or unknown.',
    params: symbolPath,
    response: 'PF4SymbolConfig',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  CfgRequestSymbol: defineOperation({
    name: 'CfgRequestSymbol',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/CfgRequestSymbol/{symbol}`,
    tag: 'PF4 Symbols',
    summary: 'Live configuration of one configured symbol (hidden ones too); 404 when unknown.',
    params: symbolPath,
    response: 'PF4SymbolConfig',
    timeout: 'read',
    read: 'live',
    ...shares(symbols.CfgRequestSymbolSymbol),
  }),
  CfgRequestSymbolGroup: defineOperation({
    name: 'CfgRequestSymbolGroup',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/CfgRequestSymbolGroup`,
    tag: 'PF4 Symbols',
    summary:
      'The 32 security (symbol) group slots (name, description) read live, in slot order; unused slots are empty.',
    response: 'PF4SymbolGroup[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestSymbolGroup' },
  }),
  SymbolInfoGet: defineOperation({
    name: 'SymbolInfoGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolInfoGet/{symbol}`,
    tag: 'PF4 Symbols',
    summary:
      'Cached summary of an active symbol (bid, ask, day high and low, spread, digits, direction, last-tick time); 404 when not loaded.',
    params: symbolPath,
    response: 'PF4SymbolInfo',
    timeout: 'read',
    read: 'cached',
    ...shares(symbols.SymbolInfoGet),
  }),
  SymbolSessionsGet: defineOperation({
    name: 'SymbolSessionsGet',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolSessionsGet/{symbol}`,
    tag: 'PF4 Symbols',
    summary: 'The 7 weekday session entries of a configured symbol (0 = Sunday) from the cache; 404 when unknown.',
    params: symbolPath,
    response: 'PF4SymbolDaySessions[]',
    timeout: 'read',
    read: 'cached',
    ...shares(symbols.SymbolSessionsGet),
  }),
  SymbolChange: defineOperation({
    name: 'SymbolChange',
    generation: 'v1',
    family: 'PF4',
    method: 'POST',
    path: `${v1}/SymbolChange`,
    tag: 'PF4 Symbols',
    summary:
      "Quick change of a symbol's spread, spread balance, stops level, colour, smoothing and execution mode (the fields given); true when done; needs admin rights.",
    body: symbols.SymbolChange.body,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    ...shares(symbols.SymbolChange),
  }),
  SymbolsRefresh: defineOperation({
    name: 'SymbolsRefresh',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolsRefresh`,
    tag: 'PF4 Symbols',
    summary:
      'Reloads the symbol catalog: the server hands every active symbol over afresh; true when done (GET on v1).',
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    ...shares(symbols.SymbolsRefresh),
  }),

  // ---- Market watch, ticks and charts -------------------------------------------------------------------------
  SymbolAdd: defineOperation({
    name: 'SymbolAdd',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolAdd/{symbol}`,
    tag: 'PF4 Market Watch',
    summary:
      'Adds a configured symbol to the selected (active) symbols: it receives ticks and accepts orders; true when done (GET on v1); needs the market watch right.',
    params: symbolPath,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    ...shares(symbols.SymbolAdd),
  }),
  SymbolHide: defineOperation({
    name: 'SymbolHide',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/SymbolHide/{symbol}`,
    tag: 'PF4 Market Watch',
    summary:
      'Removes a symbol from the selected (active) symbols: its ticks stop and orders are refused; true when done (GET on v1); needs the market watch right.',
    params: symbolPath,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    ...shares(symbols.SymbolHide),
  }),
  TickInfoLast: defineOperation({
    name: 'TickInfoLast',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TickInfoLast`,
    tag: 'PF4 Market Watch',
    summary: 'The last tick of every symbol with quotes, from the cache, by symbol name; empty when none.',
    response: 'PF4TickInfo[]',
    timeout: 'read',
    read: 'cached',
    ...shares(prices.TickInfoLast),
  }),
  TickInfoLastSymbol: defineOperation({
    name: 'TickInfoLastSymbol',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TickInfoLast/{symbol}`,
    tag: 'PF4 Market Watch',
    summary: 'The last bid/ask of a symbol from the cache; 404 when it has none.',
    params: symbolPath,
    response: 'PF4TickInfo',
    timeout: 'read',
    read: 'cached',
    ...shares(prices.TickInfoLastSymbol),
  }),
  TicksRequest: defineOperation({
    name: 'TicksRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/TicksRequest/{symbol}/{start}/{end}/{flags}`,
    tag: 'PF4 Ticks and Charts',
    summary:
      'Live tick history of a symbol in [start, end] (UTC; a time without an offset is UTC), oldest first; flags Raw (manager ticks), Normal (feed ticks), All, or several joined by commas.',
    params: windowParams(prices.TicksRequest, ['start', 'end', 'flags']),
    response: 'PF4TickRecord[]',
    timeout: 'history',
    read: 'live',
    ...shares(prices.TicksRequest),
  }),
  ChartRequest: defineOperation({
    name: 'ChartRequest',
    generation: 'v1',
    family: 'PF4',
    method: 'GET',
    path: `${v1}/ChartRequest/{symbol}/{period}/{start}/{end}/{mode}`,
    tag: 'PF4 Ticks and Charts',
    summary:
      'Live chart bars of a symbol and period (ChartPeriod) in start..end (UTC) by RequestMode (RangeIn: bars starting inside; RangeOut: widened by a bar each side; RangeLast: every bar from start; RangeInExcludeOutOfRage: bars wholly inside).',
    params: windowParams(prices.ChartRequest, ['period', 'start', 'end', 'mode']),
    response: 'PF4ChartBar[]',
    timeout: 'history',
    read: 'live',
    ...shares(prices.ChartRequest),
  }),
};
