/**
 * PF4 trades with logic beyond a generic answer: cached reads that join tables (an account's trades checked against
 * its group, an open-then-recently-closed ticket lookup), the trade transaction answered as the transaction executed,
 * the stops check's verdict, the administrator's trade edit checked against its ticket, and the live open-trades list
 * filtered by group.
 */
import { trades } from '../../../shared/catalog/v2/pf4/index.js';
import {
  BALANCE_TYPES,
  CLOSE_TYPES,
  DELETE_TYPES,
  TICKET_KIND,
  TICKET_TYPES,
  type TicketKind,
} from '../../../shared/catalog/v2/pf4/trades.js';
import { OperationError } from '../../../shared/errors.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import type { Row } from '../../cache/pumpCache.js';
import { notFound } from '../../session/managerErrors.js';
import { fromCache, type HandlerResult } from '../handler.js';
import { isIntegerKey, pageRequest, pagingMeta } from '../paging.js';
import { bind } from './bind.js';
import { valueText } from '../../../shared/valueText.js';

const shapeTrade = shapeRecord('PF4Trade');
const shapeTransaction = shapeRecord('PF4TradeTransaction');

/** Result codes a stops check answers as its verdict (the code an open with these prices would get). */
const STOPS_VERDICTS: ReadonlySet<number> = new Set([
  PF4_RESULT.TradeBadPrices,
  PF4_RESULT.TradeBadStops,
  PF4_RESULT.TradeExpirationDenied,
]);

const has = (list: readonly string[], value: string) => list.includes(value);

/**
 * The transaction as the server executed it: the ticket it made or acted on, the account, command, symbol, volume,
 * stops and expiration of the resulting record, and the executed price (open price of an opened, modified or
 * activated trade; close price of a closed or deleted one; the amount of a balance or credit entry). The request's
 * own members the record does not carry (type, request flags, deviation, crc) are echoed.
 */
function executed(request: Record<string, unknown>, record: Row): unknown {
  const type = String(request.tradeTransactionType);
  const price = has(BALANCE_TYPES, type)
    ? record.profit
    : has(CLOSE_TYPES, type) || has(DELETE_TYPES, type)
      ? record.closePrice
      : record.openPrice;
  return shapeTransaction({
    tradeTransactionType: type,
    tradeCommand: record.tradeCommand ?? request.tradeCommand ?? null,
    tradeRequestFlags: request.tradeRequestFlags ?? null,
    expiration: record.expiration,
    order: record.order,
    orderBy: record.login,
    symbol: record.symbol ?? null,
    volume: record.volume,
    price,
    sl: record.sl,
    tp: record.tp,
    ieDeviation: request.ieDeviation ?? 0,
    comment: record.comment ?? null,
    crc: request.crc ?? 0,
  });
}

/** Trades read per round trip while filtering the live open-trades list by group. */
const GROUP_SCAN_CHUNK = 2000;

export const pf4TradesBindings = [
  /** The account's open trades from the cache, provided the cached account is in the group asked for. */
  bind(trades.TradesGetByLogin, (ctx) =>
    fromCache(ctx, (): HandlerResult => {
      const { login, group } = ctx.args;
      const account = ctx.platform.cache.get('users', login);
      if (!account) throw notFound('PF4', `login ${login} not found`);
      if (account.group !== group) throw notFound('PF4', `login ${login} is not in group ${group}`);
      // The rows' text as the packed table keeps it, nothing rebuilt.
      const open = ctx.platform.cache.table('trades');
      return { rows: open ? open.rowTexts(open.lookupViews('login', login)) : [] };
    }),
  ),

  /** An open trade, else a recently closed one the cache still holds. */
  /**
   * A check is a question: its refusal (the code an open with these prices would get) answers data false with the
   * code in the error, as the spec has `true when the result code is Ok`; a transaction the server cannot read or
   * any other failure is an ordinary error envelope with data null.
   */
  bind(trades.TradeCheckStops, async (ctx) => {
    const args: Record<string, unknown> = { record: ctx.args.body };
    if (ctx.args.price !== undefined) args.price = ctx.args.price;
    try {
      const answer = await ctx.platform.session.request('TradeCheckStops', args, ctx.deadline);
      return { data: answer === true };
    } catch (error) {
      if (
        error instanceof OperationError &&
        error.code === 'PF4Error' &&
        error.managerCode !== null &&
        STOPS_VERDICTS.has(error.managerCode)
      ) {
        throw new OperationError('PF4Error', error.message, error.managerCode, false);
      }
      throw error;
    }
  }),

  /**
   * The server takes the transaction's members at the top level and answers the record it produced or changed. A
   * reference name acting on a ticket (DeletePending, CloseMarket, …) first reads the ticket live and refuses an order
   * of another kind than the name says, sending nothing: the platform's own transaction would act on any kind. Any
   * transaction acting on a ticket that names its account (`orderBy`) reads it too, and is refused, not found for that
   * account, when the ticket is another account's: the server acts on the ticket whatever `orderBy` says.
   */
  bind(trades.TradeTransaction, async (ctx) => {
    const { [TICKET_KIND]: kind, ...request } = ctx.args.body as Record<string, unknown> & {
      [TICKET_KIND]?: TicketKind;
    };
    const owner = TICKET_TYPES.includes(String(request.tradeTransactionType)) ? request.orderBy : undefined;
    if (kind || owner !== undefined) {
      const held = (await ctx.platform.session.request(
        'TradeRecordRequest',
        { order: request.order },
        ctx.deadline,
      )) as Row;
      const command = String(held?.tradeCommand);
      if (kind && !kind.commands.includes(command)) {
        throw new OperationError(
          'Validation',
          `body.order: order ${String(request.order)} is a ${command} trade; ${kind.name} acts only on ${kind.commands.join(', ')} orders`,
        );
      }
      if (owner !== undefined && held?.login !== owner) {
        throw notFound(
          'PF4',
          `body.orderBy: order ${String(request.order)} is not a trade of login ${valueText(owner)} (it is login ${String(held?.login)}'s); orderBy must be the ticket's login, or absent`,
        );
      }
    }
    const record = await ctx.platform.session.request('TradeTransaction', request, ctx.deadline);
    if (!record || typeof record !== 'object')
      throw new OperationError('Internal', 'the trading server answered the transaction without a trade record');
    return { data: executed(request, record as Row) };
  }),

  /** The body's `order`, when given, must be the ticket of the path; an unknown ticket is not found. */
  bind(trades.AdmTradeRecordModify, async (ctx) => {
    const { ticket, body } = ctx.args;
    const update = body;
    if (update.order !== undefined && update.order !== ticket) {
      throw new OperationError('Validation', `body.order: must be the ticket of the path (${ticket}) or absent`);
    }
    const record = await ctx.platform.session.request(
      'AdmTradeRecordModify',
      { ticket, record: update },
      ctx.deadline,
      { keyedRead: true },
    );
    return { data: shapeTrade(record) };
  }),

  /**
   * Live open trades by ticket. Without a group the server pages them itself. With one, the group must exist; the
   * open trades are read in chunks from the cursor on, their accounts' groups read live with them, and the trades of
   * the group's accounts kept until the page is full (one more tells whether another page follows).
   */
  bind(trades.TradesRequest, async (ctx) => {
    const page = pageRequest(ctx.args, isIntegerKey);
    const session = ctx.platform.session;
    type TradePage = { items?: unknown[]; hasMore?: boolean };
    if (ctx.args.group === undefined) {
      const got = (await session.request(
        'TradesRequest',
        {
          ...(page.after !== undefined ? { after: page.after } : {}),
          ...(page.limit !== undefined ? { limit: page.limit + 1 } : {}),
        },
        ctx.deadline,
      )) as TradePage;
      let items = (got?.items ?? []).map(shapeTrade) as Row[];
      let hasMore = got?.hasMore === true;
      if (page.limit !== undefined && items.length > page.limit) {
        items = items.slice(0, page.limit);
        hasMore = true;
      }
      return { data: items, paging: pagingMeta(hasMore, items.at(-1)?.order) };
    }
    const group = ctx.args.group;
    await session.request('GroupRecordRequest', { group }, ctx.deadline, { keyedRead: true });
    const want = page.limit === undefined ? Infinity : page.limit + 1;
    const kept: Row[] = [];
    let after = page.after;
    for (;;) {
      const got = (await session.request(
        'TradesRequest',
        { ...(after !== undefined ? { after } : {}), limit: GROUP_SCAN_CHUNK },
        ctx.deadline,
      )) as TradePage;
      const chunk = (got?.items ?? []) as Row[];
      if (chunk.length) {
        const logins = [...new Set(chunk.map((t) => t.login as number))];
        const users = (await session.request('UserRecordsRequest', { logins }, ctx.deadline)) as Row[];
        const members = new Set(
          (Array.isArray(users) ? users : []).filter((u) => u.group === group).map((u) => u.login),
        );
        for (const t of chunk) {
          if (!members.has(t.login)) continue;
          kept.push(shapeTrade(t) as Row);
          if (kept.length >= want) break;
        }
      }
      if (kept.length >= want || got?.hasMore !== true || !chunk.length) break;
      after = chunk[chunk.length - 1].order as number;
    }
    const hasMore = kept.length > (page.limit ?? Infinity);
    const items = hasMore ? kept.slice(0, page.limit) : kept;
    return { data: items, paging: pagingMeta(hasMore, items.at(-1)?.order) };
  }),
];
