/**
 * v2 PF4 Trades: open trades from the cache and live, trade transactions, administrator trade commands, and the batch
 * reads of every open trade (a snapshot, and the reads of a trades sync session).
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import {
  booleanQuery,
  contractBody,
  enumText,
  groupName,
  int32List,
  login32,
  numberText,
  order32,
  pageQuery,
  symbolName,
  ticket32,
  unixSeconds32,
} from '../../fields.js';
import { TradeCommandMembers } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';
import { batchQuery } from './users.js';

/** The trade transaction types of the platform, by what they do. */
export const OPEN_TYPES = [
  'BrOrderOpen',
  'OrderOpen',
  'OrderImOpen',
  'OrderMkOpen',
  'OrderReqOpen',
  'OrderPendingOpen',
] as const;
export const CLOSE_TYPES = ['BrOrderClose', 'OrderClose', 'OrderImClose', 'OrderMkClose', 'OrderReqClose'] as const;
export const MODIFY_TYPES = ['BrOrderModify', 'OrderModify'] as const;
export const DELETE_TYPES = ['BrOrderDelete', 'OrderDelete'] as const;
export const ACTIVATE_TYPES = ['BrOrderActivate'] as const;
export const BALANCE_TYPES = ['BrBalance'] as const;
export const TRANSACTION_TYPES = [
  ...OPEN_TYPES,
  ...CLOSE_TYPES,
  ...MODIFY_TYPES,
  ...DELETE_TYPES,
  ...ACTIVATE_TYPES,
  ...BALANCE_TYPES,
] as const;

/** Commands that open a market trade or place a pending order. */
const ORDER_COMMANDS = ['Buy', 'Sell', 'BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'] as const;
const MARKET_COMMANDS = ['Buy', 'Sell'] as const;
const PENDING_COMMANDS = ['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'] as const;

/** A name of the reference vocabulary: the platform's transaction it stands for, and the commands it implies. */
export interface TransactionAlias {
  type: (typeof TRANSACTION_TYPES)[number];
  /** The trade commands the name allows (a `tradeCommand` sent must be one); a sole one is filled in when none is sent. */
  commands?: readonly string[];
  meaning: string;
}

/**
 * The reference vocabulary of trade transaction types, accepted as equals of the platform's own names (which the
 * transaction is then run and answered as): each names one dealer transaction, and where it says which kind of order
 * it makes (market or pending, balance or credit) the command sent must be of that kind.
 */
export const TRANSACTION_ALIASES: Readonly<Record<string, TransactionAlias>> = {
  OpenMarket: { type: 'BrOrderOpen', commands: MARKET_COMMANDS, meaning: 'opens a market trade, Buy or Sell' },
  OpenPending: {
    type: 'BrOrderOpen',
    commands: PENDING_COMMANDS,
    meaning: 'places a pending order, BuyLimit, SellLimit, BuyStop or SellStop',
  },
  CloseMarket: {
    type: 'BrOrderClose',
    commands: MARKET_COMMANDS,
    meaning: "closes a market trade, in part when volume is below the trade's",
  },
  ModifyTrade: { type: 'BrOrderModify', commands: MARKET_COMMANDS, meaning: "changes a market trade's SL and TP" },
  ModifyPending: {
    type: 'BrOrderModify',
    commands: PENDING_COMMANDS,
    meaning: "changes a pending order's price, SL, TP and expiration",
  },
  DeletePending: { type: 'BrOrderDelete', commands: PENDING_COMMANDS, meaning: 'cancels a pending order' },
  ActivatePending: {
    type: 'BrOrderActivate',
    commands: PENDING_COMMANDS,
    meaning: 'activates a pending order at the market',
  },
  BalanceAdd: {
    type: 'BrBalance',
    commands: ['Balance'],
    meaning: 'a balance entry: a deposit, or a withdrawal when price, the amount, is negative',
  },
  CreditAdd: {
    type: 'BrBalance',
    commands: ['Credit'],
    meaning: 'a credit entry: credit given, or taken back when price, the amount, is negative',
  },
};

/** The platform's transactions that act on an existing ticket (`order`). */
export const TICKET_TYPES: readonly string[] = [...CLOSE_TYPES, ...MODIFY_TYPES, ...DELETE_TYPES, ...ACTIVATE_TYPES];

/**
 * The member a reference name acting on a ticket adds to the validated transaction: the name and the commands the
 * ticket's order must have (DeletePending cancels only a pending order). The broker reads the ticket, refuses another
 * kind, and never sends the member to the trading server.
 */
export const TICKET_KIND = 'ticketKind';
export interface TicketKind {
  name: string;
  commands: string[];
}

/** Every name `tradeTransactionType` accepts: the platform's own, then the reference vocabulary. */
export const TRANSACTION_TYPE_NAMES = [...TRANSACTION_TYPES, ...Object.keys(TRANSACTION_ALIASES)] as [
  string,
  ...string[],
];

/** The platform's own transaction type a name stands for (itself when it is one). */
export const ownTransactionType = (name: string): string => TRANSACTION_ALIASES[name]?.type ?? name;

const isOneOf = (list: readonly string[], v: unknown) => typeof v === 'string' && list.includes(v);

type Tx = Record<string, unknown>;
type Issue = { code: 'custom'; path: string[]; message: string };

/** The members of a PF4TradeTransaction every kind of transaction shares, with their limits. */
const transactionShape = {
  tradeCommand: enumText('tradeCommand', TradeCommandMembers).nullable().optional(),
  symbol: z
    .string()
    .min(1, 'symbol must not be empty')
    .max(12, 'symbol must be at most 12 characters')
    .nullable()
    .optional(),
  comment: z.string().max(31, 'comment must be at most 31 characters').nullable().optional(),
  order: z
    .number()
    .int('order must be an integer')
    .min(1, 'order must be at least 1')
    .max(2147483647, 'order must be at most 2147483647')
    .optional(),
  orderBy: z
    .number()
    .int('orderBy must be an integer')
    .min(1, 'orderBy must be at least 1')
    .max(2147483647, 'orderBy must be at most 2147483647')
    .optional(),
  volume: z
    .number()
    .int('volume must be an integer (1/100 lot)')
    .min(0, 'volume must be 0 or positive')
    .max(2147483647, 'volume must be at most 2147483647')
    .optional(),
  ieDeviation: z
    .number()
    .int('ieDeviation must be an integer (points)')
    .min(0, 'ieDeviation must be 0 or positive')
    .max(2147483647, 'ieDeviation must be at most 2147483647')
    .optional(),
  price: z.number().refine(Number.isFinite, 'price must be a finite number').optional(),
  sl: z.number().refine(Number.isFinite, 'sl must be a finite number').optional(),
  tp: z.number().refine(Number.isFinite, 'tp must be a finite number').optional(),
};

/** What an opening transaction needs: the account, an order command, the symbol, a volume, a pending order's price. */
function openingIssues(tx: Tx): Issue[] {
  const issues: Issue[] = [];
  const need = (field: string, message: string) => issues.push({ code: 'custom', path: [field], message });
  if (tx.orderBy === undefined) need('orderBy', 'orderBy (the login) is required');
  if (!isOneOf(ORDER_COMMANDS, tx.tradeCommand))
    need('tradeCommand', `tradeCommand must be one of ${ORDER_COMMANDS.join(', ')}`);
  if (!tx.symbol) need('symbol', 'symbol is required');
  if (tx.volume === undefined || tx.volume === 0) need('volume', 'volume is required (1/100 lot, at least 1)');
  if (isOneOf(PENDING_COMMANDS, tx.tradeCommand) && tx.price === undefined)
    need('price', 'price is required for a pending order');
  return issues;
}

/**
 * A reference name's transaction as the platform's own: the type replaced, the implied command filled in when none
 * is sent. The command sent with a reference name must be of the kind the name says (refused naming both).
 */
function asOwnTransaction(tx: Tx, issue?: (field: string, message: string) => void): Tx {
  const alias = TRANSACTION_ALIASES[String(tx.tradeTransactionType)];
  if (!alias) return tx;
  const { commands } = alias;
  if (commands && tx.tradeCommand != null && !isOneOf(commands, tx.tradeCommand)) {
    issue?.('tradeCommand', `tradeCommand must be ${commands.join(' or ')} for ${String(tx.tradeTransactionType)}`);
  }
  // A command is implied only where the name allows just one (BalanceAdd, CreditAdd); an order's side is never guessed.
  const implied = commands?.length === 1 && tx.tradeCommand == null ? { tradeCommand: commands[0] } : {};
  // A name that acts on a ticket says which kind of order the ticket must be; the broker checks the ticket's own.
  const onTicket =
    commands && TICKET_TYPES.includes(alias.type)
      ? { [TICKET_KIND]: { name: String(tx.tradeTransactionType), commands: [...commands] } satisfies TicketKind }
      : {};
  return { ...tx, ...implied, ...onTicket, tradeTransactionType: alias.type };
}

const TRANSACTION_TYPE_DESCRIPTION = `The transaction to run. The platform's own names, or their equals in the reference vocabulary: ${Object.entries(
  TRANSACTION_ALIASES,
)
  .map(([name, a]) => `${name} = ${a.type} (${a.meaning})`)
  .join('; ')}. A reference name runs as the platform's name it stands for, which the answer carries.`;

/** A trade transaction body: a known type and the members that type needs, each refusal naming the member. */
const transactionBody = (contractBody('PF4TradeTransaction') as z.ZodObject)
  .extend({
    ...transactionShape,
    tradeTransactionType: enumText('tradeTransactionType', TRANSACTION_TYPE_NAMES).describe(
      TRANSACTION_TYPE_DESCRIPTION,
    ),
  })
  .superRefine((sent: Tx, ctx) => {
    const need = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message });
    // A command refused for the reference name is not refused again for the platform's name it stands for.
    let commandRefused = false;
    const tx = asOwnTransaction(sent, (field, message) => {
      commandRefused = true;
      need(field, message);
    });
    const type = tx.tradeTransactionType;
    if (isOneOf(OPEN_TYPES, type)) {
      for (const issue of openingIssues(tx))
        if (!(commandRefused && issue.path[0] === 'tradeCommand')) ctx.addIssue(issue);
    } else if (isOneOf(BALANCE_TYPES, type)) {
      if (tx.orderBy === undefined) need('orderBy', 'orderBy (the login) is required');
      if (!commandRefused && tx.tradeCommand !== 'Balance' && tx.tradeCommand !== 'Credit')
        need('tradeCommand', 'tradeCommand must be Balance or Credit for BrBalance');
      if (tx.price === undefined || tx.price === 0) need('price', 'price (the amount) is required and must not be 0');
    } else if (tx.order === undefined)
      need('order', `order (the ticket) is required for ${String(sent.tradeTransactionType)}`);
  })
  .transform((tx: Tx) => asOwnTransaction(tx));

/** The opening transaction whose stops TradeCheckStops checks. */
const checkStopsBody = (contractBody('PF4TradeTransaction') as z.ZodObject)
  .extend(transactionShape)
  .superRefine((tx: Tx, ctx) => {
    for (const issue of openingIssues(tx)) ctx.addIssue(issue);
  });

/** An administrator's edit of an open trade: stops not negative, the comment within the platform's 31 characters. */
const tradeUpdateBody = (contractBody('PF4TradeUpdate') as z.ZodObject).extend({
  order: z
    .number()
    .int('order must be an integer')
    .min(1, 'order must be at least 1')
    .max(2147483647, 'order must be at most 2147483647')
    .optional(),
  sl: z.number().min(0, 'sl must be 0 or positive').optional(),
  tp: z.number().min(0, 'tp must be 0 or positive').optional(),
  comment: z.string().max(31, 'comment must be at most 31 characters').nullable().optional(),
});

export const trades = {
  TradesGet: defineOperation({
    name: 'TradesGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesGet`,
    tag: 'Trades',
    summary: 'Open trades from the cache, paged, sorted by ticket ascending.',
    query: z.object(pageQuery),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    paged: { key: 'order' },
    answer: { kind: 'cachedList', table: 'trades' },
  }),
  TradesGetTicket: defineOperation({
    name: 'TradesGetTicket',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesGet/{ticket}`,
    tag: 'Trades',
    summary: 'One open trade by lookup in the open-trades dictionary (cached).',
    params: z.object({ ticket: ticket32 }),
    response: 'PF4Trade',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'trades', key: 'ticket', what: 'open trade' },
  }),
  TradesGetByLogin: defineOperation({
    name: 'TradesGetByLogin',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesGetByLogin/{login}/{group}`,
    tag: 'Trades',
    summary:
      'Open trades and pending orders of the account (cached), by ticket; empty list when none. The account must be in `group` (case-sensitive): an unknown login, or an account of another group, is a not-found envelope.',
    params: z.object({ login: login32, group: groupName }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  TradesGetBySymbol: defineOperation({
    name: 'TradesGetBySymbol',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesGetBySymbol`,
    tag: 'Trades',
    summary: 'Open trades and pending orders of the symbol (cached), by ticket; an empty list is valid.',
    query: z.object({ symbol: symbolName }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'trades', index: { name: 'symbol', arg: 'symbol' } },
  }),
  TradesGetByMarket: defineOperation({
    name: 'TradesGetByMarket',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesGetByMarket`,
    tag: 'Trades',
    summary: 'Open market trades (Buy and Sell; pending orders excluded) of every account, cached, by ticket.',
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'cached',
    answer: {
      kind: 'cachedList',
      table: 'trades',
      where: (row) => row.tradeCommand === 'Buy' || row.tradeCommand === 'Sell',
    },
  }),
  TradeRecordGet: defineOperation({
    name: 'TradeRecordGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradeRecordGet/{order}`,
    tag: 'Trades',
    summary:
      'One trade record from the cache: an open trade, else a recently closed one still cached; an unknown ticket is a not-found envelope.',
    params: z.object({ order: order32 }),
    response: 'PF4Trade',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'trades', orIn: ['closedTrades'], key: 'order', what: 'order' },
  }),
  TradeRecordRequest: defineOperation({
    name: 'TradeRecordRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradeRecordRequest/{order}`,
    tag: 'Trades',
    summary: 'One open trade read live; a not-found envelope when the ticket is not open.',
    params: z.object({ order: order32 }),
    response: 'PF4Trade',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'TradeRecordRequest', keyedRead: true },
  }),
  TradeCheckStops: defineOperation({
    name: 'TradeCheckStops',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/TradeCheckStops`,
    tag: 'Trades',
    summary:
      'Checks an opening transaction against the reference price `price` (default: the live quote): SL, TP and a pending open price at least the stops level from the market, a pending expiration at least ten minutes ahead. true when the result code is Ok; a refusal answers data false with the result code in the error (read-only despite POST).',
    query: z.object({ price: numberText('price').optional() }),
    body: checkStopsBody,
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  TradeClearRollback: defineOperation({
    name: 'TradeClearRollback',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/TradeClearRollback/{order}`,
    tag: 'Trades',
    summary:
      'Undoes an automatic activation (pending, SL, TP, stop-out) still held in the rollback buffer: true when undone, false when nothing is held (already committed or rolled back: harmless); a ticket the server never had is a not-found envelope.',
    params: z.object({ order: order32 }),
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'TradeClearRollback', keyedRead: true },
  }),
  TradesRequest: defineOperation({
    name: 'TradesRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesRequest`,
    tag: 'Trades',
    summary:
      "Open trades read live, paged by ticket ascending; with `group`, only those of the group's accounts (an unknown group is a not-found envelope).",
    query: z.object({ ...pageQuery, group: groupName.optional() }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'order' },
    answer: { kind: 'custom' },
  }),
  AdmTradeRecordModify: defineOperation({
    name: 'AdmTradeRecordModify',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/AdmTradeRecordModify/{ticket}`,
    tag: 'Trades',
    summary:
      "Administrator's direct edit of an open trade without market checks: the given sl, tp, magic, comment, commission and storage are written (profit, taxes and the agent commission are the server's); answers the trade; needs admin rights.",
    params: z.object({ ticket: ticket32 }),
    body: tradeUpdateBody,
    response: 'PF4Trade',
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'custom' },
  }),
  TradeTransaction: defineOperation({
    name: 'TradeTransaction',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/TradeTransaction`,
    tag: 'Trades',
    summary:
      'One trade transaction (open, close, modify, delete, activate, balance or credit); answers the transaction as executed: `order` the ticket it made or acted on, `price` the executed price (the amount for balance and credit).',
    body: transactionBody,
    response: 'PF4TradeTransaction',
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'custom' },
  }),
  TradeRecordsRequest: defineOperation({
    name: 'TradeRecordsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradeRecordsRequest`,
    tag: 'Trades',
    summary:
      'The open trades among `orders`, read live as one request; tickets that are not open are silently omitted.',
    query: z.object({ orders: int32List('orders') }),
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'TradeRecordsRequest' },
  }),
  AdmTradesRequest: defineOperation({
    name: 'AdmTradesRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/AdmTradesRequest/{group}`,
    tag: 'Trades',
    summary:
      "Trades of the group's accounts, live: open ones by ticket, then, with openOnly=false (default true), their closed trades oldest first; an unknown group is a not-found envelope; needs admin rights.",
    params: z.object({ group: groupName }),
    query: z.object({ openOnly: booleanQuery.optional() }),
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    answer: {
      kind: 'live',
      command: 'AdmTradesRequest',
      args: (a) => ({ group: a.group, openOnly: a.openOnly ?? true }),
      keyedRead: true,
    },
  }),
  AdmTradesDelete: defineOperation({
    name: 'AdmTradesDelete',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/AdmTradesDelete`,
    tag: 'Trades',
    summary:
      'Deletes the open trades `orders` as a dealer delete does (pending cancelled, market trades removed without touching the balance); every ticket must be open, else nothing is deleted and the envelope is not-found; needs admin rights.',
    query: z.object({ orders: int32List('orders') }),
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'AdmTradesDelete', keyedRead: true },
  }),
  TradesSyncStart: defineOperation({
    name: 'TradesSyncStart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/TradesSyncStart`,
    tag: 'Trades',
    summary:
      'Opens a trades sync session on the manager connection: reserves the open trades changed at or after `timestamp` (Unix seconds, 0 = all) for the next sync reads; needs admin rights.',
    query: z.object({ timestamp: unixSeconds32('timestamp') }),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    // Custom: a start also drops what the broker holds back of the session's previous snapshot (TradesSyncRead).
    answer: { kind: 'custom' },
  }),
  TradesSyncRead: defineOperation({
    name: 'TradesSyncRead',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesSyncRead`,
    tag: 'Batch reads',
    summary:
      "Takes the next `limit` trades (by ticket) of the trades sync session TradesSyncStart opened on this broker's manager connection; the rest stay reserved for the next read, and the read that drains the snapshot drops it. Fewer than `limit` when more would pass the 16 MiB an answer may carry (the rest stay reserved). [] when drained; a not-found envelope when the snapshot is lost (never started on this broker, or its manager connection reconnected since): start again; needs admin rights.",
    query: batchQuery,
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    mutating: true,
    answer: { kind: 'custom' },
  }),
  TradesSnapshot: defineOperation({
    name: 'TradesSnapshot',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesSnapshot`,
    tag: 'Batch reads',
    summary:
      'Every open trade and pending order as the server holds them at one instant, valued at its quotes of that instant, in one round trip: the first `limit` by ticket; says nothing of trades left out (exactly `limit` rows: there may be more). A `limit` whose rows pass the 16 MiB an answer may carry is refused, naming how many fit; needs admin rights.',
    query: batchQuery,
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'custom' },
  }),
};
