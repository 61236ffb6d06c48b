/**
 * v1 PF5 operations: bare records on success, HTTP status errors (PF5 platform refusals with the `PF5Error` body).
 *
 * Where a v2 sibling exists (`UserGet`, `GroupGet`, `SymbolGet`) the entry shares its handler: same `op`, same
 * answer, same arguments. The rest are live passthroughs of the manager command of the same name, cached reads of the
 * pumping cache ("Get" names: by key, by a list of keys, by login, or by the account's group through a mask), a
 * Type 1 overlay (`DealUpdate`: the deal read from the server, only the supplied fields laid over it, written back),
 * and a few hand-written handlers (`broker/handlers/custom/v1Pf5.ts`) for the cached reads that join positions and
 * orders with their account's group and for the two records the contract does not have (`PF5UserAccount`,
 * `PF5ChartBar`).
 *
 * Optional trailing `fromTime` / `toTime` segments: one route per arity (`DealRequest/{login}/{fromTime}/{toTime}`,
 * `.../{fromTime}` as `DealRequestSince`, `.../{login}` as `DealRequestAll`) sharing one handler; an absent bound is
 * left open, so the window runs from the Unix epoch to the maximum time.
 *
 * 64-bit ids: PF5 logins and tickets are int64 and kept exact end to end, also beyond 2^53 − 1: the path and query
 * (`positiveInt64`) and the bodies (`int64Body`, the contract's `int64`) read them as numbers up to 2^53 − 1 and as
 * bigints beyond (`shared/int64.ts`), every JSON hop (both links, the manager protocol, cached rows, answers) reads and
 * writes them with the lossless JSON of `shared/losslessJson.ts`, and answers carry them as bare digits. Above
 * 9223372036854775807 or below 1 is a 400 naming the field.
 */
import { z } from 'zod';
import { defineOperation, type Operation, type OperationInput } from '../operation.js';
import {
  contractBody,
  dateTimeText,
  distinct,
  enumText,
  int64Body,
  int64List,
  LIST_VALUES_MAX,
  login64,
  maskText,
  positiveInt64,
} from '../fields.js';
import { pf5V2 } from '../v2/pf5.js';
import { valueText } from '../../valueText.js';

const v1 = '/api/PF5/{tradePlatform}';

/** v1 group and symbol parameters: the full names the server keeps (the 16 / 12 character limits are v2's). */
const group = z.string().min(1, 'group must not be empty').max(64, 'group must be at most 64 characters');
const symbol = z.string().min(1, 'symbol must not be empty').max(32, 'symbol must be at most 32 characters');
/** A comma-separated list of exact symbol names (`EURUSD,GBPUSD`). */
const symbolList = z
  .string()
  .max(1024, 'symbol must be at most 1024 characters')
  .refine((v) => v.split(',').some((s) => s.trim().length > 0), 'symbol must name at least one symbol');
const ticket = positiveInt64('ticket');

/** A JSON array of 64-bit ids in a body, each exact (a bigint beyond 2^53 − 1). */
const idArray = (what: string) =>
  z
    .array(int64Body(`${what} item`), { error: () => `must be a JSON array of ${what}` })
    .min(1, `${what} must list at least one ticket`)
    .max(LIST_VALUES_MAX, `${what} must list at most ${LIST_VALUES_MAX} tickets`)
    .transform(distinct);
const ticketsBody = idArray('tickets');

/** Password operations take the password as a JSON string body. */
const passwordBody = z
  .string({ error: () => 'the password must be a JSON string' })
  .min(1, 'the password must not be empty')
  .max(256, 'the password must be at most 256 characters');
/** The password a call checks or changes (UsersPasswords): the main or the investor (read-only) one. */
const passwordType = enumText('type', ['Main', 'Investor'] as const);

// ---- records the contract does not have -------------------------------------------------------------------------

const double = { type: 'number', format: 'double' } as const;
const int64 = { type: 'integer', format: 'int64' } as const;
const record = (title: string, description: string, properties: Record<string, Record<string, unknown>>) => ({
  type: 'object',
  title,
  description,
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** An account's money at the current quotes (`UserAccountGet` / `UserAccountRequest`). */
export const PF5_USER_ACCOUNT = record(
  'PF5UserAccount',
  "An account's balance, credit, equity and margin at the current quotes.",
  {
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
);

/** One minute bar (`ChartRequest`). */
export const PF5_CHART_BAR = record('PF5ChartBar', 'One M1 bar of bid prices.', {
  dateTime: { type: 'string', format: 'date-time', description: 'the minute the bar opens' },
  open: double,
  high: double,
  low: double,
  close: double,
  tickVolume: { ...int64, description: 'ticks in the minute' },
  spread: { type: 'integer', format: 'int32', description: 'spread in points' },
  volume: { ...int64, description: 'exchange volume (0 for over-the-counter symbols)' },
});
const chartBars = { type: 'array', items: PF5_CHART_BAR };

// ---- bodies --------------------------------------------------------------------------------------------------------

/** Account fields the server derives: not part of a new account. */
const USER_SERVER_FIELDS = [
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
] as const;

/**
 * PF5UserAdd: the writable PF5User fields and the two passwords. `group`, `leverage` and a first or last name are
 * required (rule 2); `login` 0, null or absent lets the server allocate one (rule 1); an empty or absent password
 * has the server generate both (rule 6). An unknown field is refused, named.
 */
const userAddBody = (contractBody('PF5User') as z.ZodObject)
  .omit(
    Object.fromEntries(USER_SERVER_FIELDS.map((f) => [f, true])) as Record<(typeof USER_SERVER_FIELDS)[number], true>,
  )
  .extend({
    login: int64Body('login', 0).nullable().optional(),
    group: z
      .string({ error: () => 'group is required' })
      .min(1, 'group is required')
      .max(64, 'group must be at most 64 characters'),
    leverage: z
      .number({ error: () => 'leverage is required' })
      .int('leverage must be an integer')
      .min(1, 'leverage must be at least 1')
      .max(2147483647, 'leverage must be a 32-bit integer'),
    certSerialNumber: int64Body('certSerialNumber', 0).nullable().optional(),
    password: z
      .string({ error: () => 'password must be a string' })
      .max(256, 'password must be at most 256 characters')
      .nullable()
      .optional(),
    passwordInvestor: z
      .string({ error: () => 'passwordInvestor must be a string' })
      .max(256, 'passwordInvestor must be at most 256 characters')
      .nullable()
      .optional(),
  })
  .superRefine((v, ctx) => {
    const filled = (s: unknown) => typeof s === 'string' && s.trim().length > 0;
    if (!filled(v.firstName) && !filled(v.lastName)) {
      ctx.addIssue({ code: 'custom', path: ['firstName'], message: 'firstName or lastName must be filled' });
    }
  });

/** A new account's record as the server takes it: null members are absent (null login: allocate; null password: generate). */
const withoutNulls = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null));

/** UserUpdate: a PF5User naming its login; the server keeps its own fields (balance, times) whatever is sent. */
const userUpdateBody = (contractBody('PF5User') as z.ZodObject).extend({
  login: int64Body('login'),
});

/** DealUpdate: a PF5Deal naming its ticket; only the fields supplied (non-null) change. */
const dealUpdateBody = (contractBody('PF5Deal') as z.ZodObject).extend({
  deal: int64Body('deal'),
});

/** The symbol fields `SymbolUpdate` applies; any other PF5Symbol field in the body is ignored. */
export const SYMBOL_UPDATE_FIELDS = [
  'execMode',
  'color',
  'stopsLevel',
  'spreadBalance',
  'spreadDiff',
  'spreadDiffBalance',
] as const;

// ---- masks -----------------------------------------------------------------------------------------------------------

/** Whether `text` matches `pattern` in full, `*` standing for any run of characters (linear, no regular expression). */
function globMatches(text: string, pattern: string): boolean {
  let t = 0;
  let p = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

let lastMask: { mask: string; test: (name: string) => boolean } | undefined;

/**
 * A group (or symbol) mask as the manager interface takes it: comma-separated full names or patterns, `*` any run of
 * characters, a leading `!` excludes and wins over the includes (`real\*,!real\vip`); case-sensitive.
 */
export function maskMatcher(mask: string): (name: string) => boolean {
  if (lastMask?.mask === mask) return lastMask.test;
  const parts = mask
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const include = parts.filter((p) => !p.startsWith('!'));
  const exclude = parts.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const test = (name: string) =>
    !exclude.some((p) => globMatches(name, p)) && include.some((p) => globMatches(name, p));
  lastMask = { mask, test };
  return test;
}

/** The exact symbol names of a `symbol` list parameter. */
export const symbolsOf = (list: string): Set<string> =>
  new Set(
    list
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

// ---- optional time windows -------------------------------------------------------------------------------------------

type Shape = Record<string, z.ZodType>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the fields every entry shares, whatever its schemas
type Common = Omit<OperationInput<any, any, any>, 'name' | 'op' | 'path' | 'params' | 'generation' | 'family'>;

const fromTime = dateTimeText('fromTime');
const toTime = dateTimeText('toTime');

/**
 * One operation with optional trailing `fromTime` / `toTime` path segments as three routes sharing one handler:
 * `name` with both, `<name>Since` with `fromTime` only, `<name>All` with neither. An absent bound is open: the epoch
 * at the start, the maximum time at the end. `toTime` before `fromTime` is refused.
 */
function windowed<N extends string>(
  name: N,
  base: string,
  shape: Shape,
  common: Common,
): Record<N | `${N}Since` | `${N}All`, Operation> {
  const op = `PF5.${name}`;
  // Only two valid times can be in the wrong order: a bound that is not a date-time has its own message.
  const both = z
    .object({ ...shape, fromTime, toTime })
    .refine((a) => !(Date.parse(a.toTime) < Date.parse(a.fromTime)), {
      path: ['toTime'],
      message: 'toTime must not be before fromTime',
    });
  return {
    [name]: defineOperation({
      ...common,
      name,
      op,
      generation: 'v1',
      family: 'PF5',
      path: `${v1}/${base}/{fromTime}/{toTime}`,
      params: both,
    }),
    [`${name}Since`]: defineOperation({
      ...common,
      name: `${name}Since`,
      op,
      generation: 'v1',
      family: 'PF5',
      path: `${v1}/${base}/{fromTime}`,
      params: z.object({ ...shape, fromTime }),
    }),
    [`${name}All`]: defineOperation({
      ...common,
      name: `${name}All`,
      op,
      generation: 'v1',
      family: 'PF5',
      path: `${v1}/${base}`,
      ...(Object.keys(shape).length ? { params: z.object(shape) } : {}),
    }),
  } as Record<N | `${N}Since` | `${N}All`, Operation>;
}

// ---- the operations ------------------------------------------------------------------------------------------------

const users = {
  UserAdd: defineOperation({
    name: 'UserAdd',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/UserAdd`,
    tag: 'PF5 Users',
    summary:
      "Creates an account: login 0 or absent is allocated by the server (UsrLoginExhausted when the range is used up), an existing login is UsrLoginExist, another server's UsrLoginProhibited, an incorrect record ErrParams; without both passwords a pair is generated (10 tries at most). Answers the new account.",
    body: userAddBody,
    response: 'PF5User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'UserAdd', args: (a) => ({ record: withoutNulls(a.body) }) },
  }),
  UserRequest: defineOperation({
    name: 'UserRequest',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserRequest/{login}`,
    tag: 'PF5 Users',
    summary: 'One account read live from the server; 404 when unknown.',
    params: z.object({ login: login64 }),
    response: 'PF5User',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'UserRequest', keyedRead: true },
  }),
  UserAccountGet: defineOperation({
    name: 'UserAccountGet',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserAccountGet/{login}`,
    tag: 'PF5 Users',
    summary:
      "An account's balance, credit, equity and margin at the current quotes, as the server's pumped account state holds them; 404 when unknown.",
    params: z.object({ login: login64 }),
    response: PF5_USER_ACCOUNT,
    timeout: 'read',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  UserAccountRequest: defineOperation({
    name: 'UserAccountRequest',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserAccountRequest/{login}`,
    tag: 'PF5 Users',
    summary:
      "An account's balance, credit, equity and margin at the current quotes, requested from the server; 404 when unknown.",
    params: z.object({ login: login64 }),
    response: PF5_USER_ACCOUNT,
    timeout: 'read',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  UserGet: defineOperation({
    name: 'UserGet',
    op: pf5V2.UserGet.op,
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserGet/{login}`,
    tag: 'PF5 Users',
    summary: 'One account from the cache; 404 when unknown.',
    params: z.object({ login: login64 }),
    response: 'PF5User',
    timeout: 'read',
    read: 'cached',
    answer: pf5V2.UserGet.answer,
  }),
  UserGetByLogins: defineOperation({
    name: 'UserGetByLogins',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserGetByLogins`,
    tag: 'PF5 Users',
    summary:
      'The known accounts among the logins (repeated query logins), from the cache, each once, in the order asked.',
    query: z.object({ logins: int64List('logins') }),
    response: 'PF5User[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  UserGetByGroup: defineOperation({
    name: 'UserGetByGroup',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/UserGetByGroup/{mask}`,
    tag: 'PF5 Users',
    summary:
      'Accounts of the groups the mask selects (full group names, `*`, `!` excludes, comma lists), from the cache, by login.',
    params: z.object({ mask: maskText }),
    response: 'PF5User[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'users', where: (row, a) => maskMatcher(a.mask)(valueText(row.group ?? '')) },
  }),
  UserUpdate: defineOperation({
    name: 'UserUpdate',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/UserUpdate`,
    tag: 'PF5 Users',
    summary:
      'Writes the account the body names by login (every field given; null empties a field; the server keeps its own figures and times); answers the updated account.',
    body: userUpdateBody,
    response: 'PF5User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'UserUpdate', args: (a) => ({ record: a.body }) },
  }),
  UserPasswordCheck: defineOperation({
    name: 'UserPasswordCheck',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/UserPasswordCheck/{login}/{type}`,
    tag: 'PF5 Users',
    summary:
      "True when the password (a JSON string body) is the account's main or investor one; otherwise the platform's UsrInvalidPassword. Changes nothing, yet needs the write scope; past the broker's bound of failed checks of a login, 429 ErrFrequent with Retry-After.",
    params: z.object({ login: login64, type: passwordType }),
    body: passwordBody,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    passwordCheck: { login: 'login' },
    answer: {
      kind: 'live',
      command: 'UserPasswordCheck',
      args: (a) => ({ login: a.login, type: a.type, password: a.body }),
    },
  }),
  UserPasswordChange: defineOperation({
    name: 'UserPasswordChange',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/UserPasswordChange/{login}/{type}`,
    tag: 'PF5 Users',
    summary:
      "Sets the account's main or investor password (a JSON string body, the group's password rule applies); answers true.",
    params: z.object({ login: login64, type: passwordType }),
    body: passwordBody,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'live',
      command: 'UserPasswordChange',
      args: (a) => ({ login: a.login, type: a.type, password: a.body }),
    },
  }),
};

const positions = {
  PositionGet: defineOperation({
    name: 'PositionGet',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/PositionGet/{login}`,
    tag: 'PF5 Positions',
    summary:
      'Open positions of the account in every symbol, from the cache, by ticket (hedging accounts hold several per symbol, each its own ticket).',
    params: z.object({ login: login64 }),
    response: 'PF5Position[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'positions', index: { name: 'login', arg: 'login' } },
  }),
  PositionGetByLogins: defineOperation({
    name: 'PositionGetByLogins',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/PositionGetByLogins`,
    tag: 'PF5 Positions',
    summary:
      'Open positions of the accounts (repeated query logins), from the cache, account by account in the order asked.',
    query: z.object({ logins: int64List('logins') }),
    response: 'PF5Position[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  PositionGetByTickets: defineOperation({
    name: 'PositionGetByTickets',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/PositionGetByTickets`,
    tag: 'PF5 Positions',
    summary:
      'The open positions among the tickets (repeated query tickets), from the cache, each once, in the order asked.',
    query: z.object({ tickets: int64List('tickets') }),
    response: 'PF5Position[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  PositionRequestByGroup: defineOperation({
    name: 'PositionRequestByGroup',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/PositionRequestByGroup/{mask}`,
    tag: 'PF5 Positions',
    summary: 'Open positions of the accounts in the groups the mask selects, read live.',
    params: z.object({ mask: maskText }),
    response: 'PF5Position[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'PositionRequestByGroup' },
  }),
  PositionGetBySymbol: defineOperation({
    name: 'PositionGetBySymbol',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/PositionGetBySymbol/{mask}/{symbol}`,
    tag: 'PF5 Positions',
    summary:
      'Open positions in the listed symbols (comma-separated) of the accounts in the groups the mask selects, from the cache, by ticket.',
    params: z.object({ mask: maskText, symbol: symbolList }),
    response: 'PF5Position[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  PositionDeleteBatch: defineOperation({
    name: 'PositionDeleteBatch',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/PositionDeleteBatch`,
    tag: 'PF5 Positions',
    summary:
      'Deletes the positions (a JSON array of tickets), all or none: an unknown ticket is ErrNotfound, one created on another trade server ErrNotMain. Deals and balances are not touched.',
    body: ticketsBody,
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'PositionDeleteBatch', args: (a) => ({ tickets: a.body }) },
  }),
};

const orders = {
  OrderGet: defineOperation({
    name: 'OrderGet',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderGet/{ticket}`,
    tag: 'PF5 Orders',
    summary: 'One open (pending) order from the cache; 404 when the ticket is not an open order.',
    params: z.object({ ticket }),
    response: 'PF5Order',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'orders', key: 'ticket', what: 'order' },
  }),
  OrderGetByGroup: defineOperation({
    name: 'OrderGetByGroup',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderGetByGroup/{mask}`,
    tag: 'PF5 Orders',
    summary: 'Unfulfilled orders of the accounts in the groups the mask selects, from the cache, by ticket.',
    params: z.object({ mask: maskText }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  OrderGetBySymbol: defineOperation({
    name: 'OrderGetBySymbol',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderGetBySymbol/{mask}/{symbol}`,
    tag: 'PF5 Orders',
    summary:
      'Unfulfilled orders in the listed symbols of the accounts in the groups the mask selects, from the cache, by ticket.',
    params: z.object({ mask: maskText, symbol: symbolList }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  OrderGetByLogins: defineOperation({
    name: 'OrderGetByLogins',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderGetByLogins`,
    tag: 'PF5 Orders',
    summary:
      'Unfulfilled orders of the accounts (repeated query logins), from the cache, account by account in the order asked.',
    query: z.object({ logins: int64List('logins') }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  OrderGetByTickets: defineOperation({
    name: 'OrderGetByTickets',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderGetByTickets`,
    tag: 'PF5 Orders',
    summary:
      'The unfulfilled orders among the tickets (repeated query tickets), from the cache, each once, in the order asked.',
    query: z.object({ tickets: int64List('tickets') }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  OrderRequestByGroup: defineOperation({
    name: 'OrderRequestByGroup',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderRequestByGroup/{mask}`,
    tag: 'PF5 Orders',
    summary: 'Unfulfilled orders of the accounts in the groups the mask selects, read live.',
    params: z.object({ mask: maskText }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'OrderRequestByGroup' },
  }),
  OrderRequestByGroupSymbol: defineOperation({
    name: 'OrderRequestByGroupSymbol',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/OrderRequestByGroupSymbol/{mask}/{symbol}`,
    tag: 'PF5 Orders',
    summary: 'Unfulfilled orders in the listed symbols of the accounts in the groups the mask selects, read live.',
    params: z.object({ mask: maskText, symbol: symbolList }),
    response: 'PF5Order[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'OrderRequestByGroupSymbol' },
  }),
  OrderRequestByTickets: defineOperation({
    name: 'OrderRequestByTickets',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/OrderRequestByTickets`,
    tag: 'PF5 Orders',
    summary:
      'The unfulfilled orders among the tickets (a JSON array, long lists allowed), read live. Read-only despite POST.',
    body: ticketsBody,
    response: 'PF5Order[]',
    timeout: 'change',
    read: 'live',
    answer: { kind: 'live', command: 'OrderRequestByTickets', args: (a) => ({ tickets: a.body }) },
  }),
  ...windowed(
    'HistoryRequest',
    'HistoryRequest/{login}',
    { login: login64 },
    {
      method: 'GET',
      tag: 'PF5 Orders',
      summary:
        'Finished orders of the account set up in the window (absent bounds: the epoch, the maximum time), read live.',
      response: 'PF5Order[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'HistoryRequest' },
    },
  ),
  ...windowed(
    'HistoryRequestByGroup',
    'HistoryRequestByGroup/{mask}',
    { mask: maskText },
    {
      method: 'GET',
      tag: 'PF5 Orders',
      summary: 'Finished orders of the accounts in the groups the mask selects, set up in the window, read live.',
      response: 'PF5Order[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'HistoryRequestByGroup' },
    },
  ),
  HistoryRequestByTickets: defineOperation({
    name: 'HistoryRequestByTickets',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/HistoryRequestByTickets`,
    tag: 'PF5 Orders',
    summary: 'The finished orders among the tickets (a JSON array), read live. Read-only despite POST.',
    body: ticketsBody,
    response: 'PF5Order[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'HistoryRequestByTickets', args: (a) => ({ tickets: a.body }) },
  }),
  OrderDeleteBatch: defineOperation({
    name: 'OrderDeleteBatch',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/OrderDeleteBatch`,
    tag: 'PF5 Orders',
    summary:
      'Deletes the orders (a JSON array of open or finished order tickets), all or none: an unknown ticket is ErrNotfound, one created on another trade server ErrNotMain.',
    body: ticketsBody,
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'OrderDeleteBatch', args: (a) => ({ tickets: a.body }) },
  }),
};

const deals = {
  ...windowed(
    'DealRequest',
    'DealRequest/{login}',
    { login: login64 },
    {
      method: 'GET',
      tag: 'PF5 Deals',
      summary: 'Deals of the account in the window (absent bounds: the epoch, the maximum time), read live.',
      response: 'PF5Deal[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'DealRequest' },
    },
  ),
  ...windowed(
    'DealRequestByGroup',
    'DealRequestByGroup/{mask}',
    { mask: maskText },
    {
      method: 'GET',
      tag: 'PF5 Deals',
      summary: 'Deals of the accounts in the groups the mask selects, in the window, read live.',
      response: 'PF5Deal[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'DealRequestByGroup' },
    },
  ),
  ...windowed(
    'DealRequestByGroupSymbol',
    'DealRequestByGroupSymbol/{mask}/{symbol}',
    { mask: maskText, symbol: symbolList },
    {
      method: 'GET',
      tag: 'PF5 Deals',
      summary: 'Deals in the listed symbols of the accounts in the groups the mask selects, in the window, read live.',
      response: 'PF5Deal[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'DealRequestByGroupSymbol' },
    },
  ),
  ...windowed(
    'DealRequestByLogins',
    'DealRequestByLogins',
    {},
    {
      method: 'GET',
      tag: 'PF5 Deals',
      summary: 'Deals of the accounts (repeated query logins) in the window, read live.',
      query: z.object({ logins: int64List('logins') }),
      response: 'PF5Deal[]',
      timeout: 'history',
      read: 'live',
      answer: { kind: 'live', command: 'DealRequestByLogins' },
    },
  ),
  DealRequestByTicket: defineOperation({
    name: 'DealRequestByTicket',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/DealRequestByTicket/{ticket}`,
    tag: 'PF5 Deals',
    summary: 'One deal read live; 404 when unknown.',
    params: z.object({ ticket }),
    response: 'PF5Deal',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'DealRequestByTicket', keyedRead: true },
  }),
  DealRequestByTickets: defineOperation({
    name: 'DealRequestByTickets',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/DealRequestByTickets`,
    tag: 'PF5 Deals',
    summary: 'The known deals among the tickets (a JSON array), read live. Read-only despite POST.',
    body: ticketsBody,
    response: 'PF5Deal[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'DealRequestByTickets', args: (a) => ({ tickets: a.body }) },
  }),
  DealRequestByTicketsQuery: defineOperation({
    name: 'DealRequestByTicketsQuery',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/DealRequestByTickets`,
    tag: 'PF5 Deals',
    summary:
      'The known deals among the tickets (repeated query tickets), read live: the GET form of DealRequestByTickets.',
    query: z.object({ tickets: int64List('tickets') }),
    response: 'PF5Deal[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'DealRequestByTickets', args: (a) => ({ tickets: a.tickets }) },
  }),
  DealUpdate: defineOperation({
    name: 'DealUpdate',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/DealUpdate`,
    tag: 'PF5 Deals',
    summary:
      'Updates the deal the body names: the deal is read from the server, only the fields supplied (non-null) are applied, the rest keep their values; the account cannot change and the balance is not touched. Answers the updated deal; 404 when unknown.',
    body: dealUpdateBody,
    response: 'PF5Deal',
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      dto: 'PF5Deal',
      read: { command: 'DealRequestByTicket', args: (a) => ({ ticket: (a.body as { deal: number }).deal }) },
      write: { command: 'DealUpdate', args: (_a, merged) => ({ record: merged }) },
    },
  }),
  DealDeleteBatch: defineOperation({
    name: 'DealDeleteBatch',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/DealDeleteBatch`,
    tag: 'PF5 Deals',
    summary:
      'Deletes the deals (a JSON array of tickets), all or none: an unknown ticket is ErrNotfound, one created on another trade server ErrNotMain. Balances and positions are not touched.',
    body: ticketsBody,
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'DealDeleteBatch', args: (a) => ({ tickets: a.body }) },
  }),
};

const groupsAndSymbols = {
  GroupGet: defineOperation({
    name: 'GroupGet',
    op: pf5V2.GroupGet.op,
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/GroupGet/{group}`,
    tag: 'PF5 Groups',
    summary: 'One group by its full name from the cache; 404 when unknown.',
    params: z.object({ group }),
    response: 'PF5ConGroup',
    timeout: 'read',
    read: 'cached',
    answer: pf5V2.GroupGet.answer,
  }),
  GroupRequest: defineOperation({
    name: 'GroupRequest',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/GroupRequest/{group}`,
    tag: 'PF5 Groups',
    summary: 'One group by its full name read live; 404 when unknown.',
    params: z.object({ group }),
    response: 'PF5ConGroup',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'GroupRequest', keyedRead: true },
  }),
  GroupRequestArray: defineOperation({
    name: 'GroupRequestArray',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/GroupRequestArray/{mask}`,
    tag: 'PF5 Groups',
    summary: 'The groups whose full names the mask selects, read live.',
    params: z.object({ mask: maskText }),
    response: 'PF5ConGroup[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'GroupRequestArray' },
  }),
  SymbolGet: defineOperation({
    name: 'SymbolGet',
    op: pf5V2.SymbolGet.op,
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/SymbolGet/{symbol}`,
    tag: 'PF5 Symbols',
    summary: 'One symbol from the cache; 404 when unknown.',
    params: z.object({ symbol }),
    response: 'PF5Symbol',
    timeout: 'read',
    read: 'cached',
    answer: pf5V2.SymbolGet.answer,
  }),
  SymbolUpdate: defineOperation({
    name: 'SymbolUpdate',
    generation: 'v1',
    family: 'PF5',
    method: 'POST',
    path: `${v1}/SymbolUpdate/{symbol}`,
    tag: 'PF5 Symbols',
    summary:
      'Applies execMode, color, stopsLevel, spreadBalance, spreadDiff and spreadDiffBalance from the PF5Symbol body (other fields are ignored); answers the updated symbol.',
    params: z.object({ symbol }),
    body: contractBody('PF5Symbol'),
    response: 'PF5Symbol',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'live',
      command: 'SymbolUpdate',
      args: (a) => {
        const body = a.body as Record<string, unknown>;
        return {
          symbol: a.symbol,
          record: Object.fromEntries(
            SYMBOL_UPDATE_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null).map((f) => [f, body[f]]),
          ),
        };
      },
    },
  }),
  SymbolRequestArray: defineOperation({
    name: 'SymbolRequestArray',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/SymbolRequestArray/{mask}/{group}`,
    tag: 'PF5 Symbols',
    summary:
      'Symbols whose full path or name the mask selects, with the settings the group overrides for its accounts; 404 for an unknown group.',
    params: z.object({ mask: maskText, group }),
    response: 'PF5Symbol[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'SymbolRequestArray' },
  }),
  SymbolRequestArrayBase: defineOperation({
    name: 'SymbolRequestArrayBase',
    op: 'PF5.SymbolRequestArray',
    generation: 'v1',
    family: 'PF5',
    method: 'GET',
    path: `${v1}/SymbolRequestArray/{mask}`,
    tag: 'PF5 Symbols',
    summary: 'Symbols whose full path or name the mask selects, with their base settings (no group given).',
    params: z.object({ mask: maskText }),
    response: 'PF5Symbol[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'SymbolRequestArray' },
  }),
  ...windowed(
    'ChartRequest',
    'ChartRequest/{symbol}',
    { symbol },
    {
      method: 'GET',
      tag: 'PF5 History',
      summary:
        'Minute bars of the symbol starting in the window (absent bounds: the epoch, the maximum time), read live; 404 for an unknown symbol.',
      response: chartBars,
      timeout: 'history',
      read: 'live',
      answer: { kind: 'custom' },
    },
  ),
};

export const pf5V1 = { ...users, ...positions, ...orders, ...deals, ...groupsAndSymbols };
