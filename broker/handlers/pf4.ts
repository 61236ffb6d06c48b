/**
 * PF4 handlers. "Get" operations answer from the pumping cache; "Request" and changing operations make a live round
 * trip through the manager session.
 */
import { recordJson } from '../cache/recordJson.js';
import { notFound } from '../session/managerErrors.js';
import { serverTime } from './common.js';
import { fromCache, type HandlerContext, type HandlerResult, type HandlerTable } from './handler.js';
import { isIntegerKey, pageOfTable, pageRequest, pagingMeta } from './paging.js';

const login = (ctx: HandlerContext) => Number(ctx.args.login);

function userRecordGet(ctx: HandlerContext) {
  const key = login(ctx);
  return fromCache(ctx, () => {
    const user = ctx.platform.cache.get('users', key);
    if (!user) throw notFound('PF4', `login ${key} not found`);
    return { json: recordJson(user) };
  });
}

async function userRecordRequest(ctx: HandlerContext): Promise<HandlerResult> {
  const key = login(ctx);
  const users = await ctx.platform.session.request('UserRecordsRequest', { logins: [key] }, ctx.deadline, { keyedRead: true });
  const user = Array.isArray(users) ? users.find((u) => u && (u as { login?: unknown }).login === key) ?? users[0] : undefined;
  if (!user) throw notFound('PF4', `login ${key} not found`);
  return { data: user };
}

/** Live paged accounts by ascending login; one extra item is asked for to learn whether another page exists. */
async function usersRequest(ctx: HandlerContext): Promise<HandlerResult> {
  const page = pageRequest(ctx.args, isIntegerKey);
  const args: Record<string, unknown> = {};
  if (page.after !== undefined) args.after = page.after;
  if (page.limit !== undefined) args.limit = page.limit + 1;
  const answer = (await ctx.platform.session.request('UsersRequest', args, ctx.deadline)) as { items?: unknown[]; hasMore?: boolean } | unknown[];
  let items = (Array.isArray(answer) ? answer : answer?.items ?? []) as Array<{ login?: number }>;
  let hasMore = !Array.isArray(answer) && answer?.hasMore === true;
  if (page.limit !== undefined && items.length > page.limit) {
    items = items.slice(0, page.limit);
    hasMore = true;
  }
  return { data: items, paging: pagingMeta(hasMore, items.length ? items[items.length - 1].login : undefined) };
}

async function userRecordNew(ctx: HandlerContext): Promise<HandlerResult> {
  return { data: await ctx.platform.session.request('UserRecordNew', { record: ctx.args.body }, ctx.deadline) };
}

function tradesGet(ctx: HandlerContext) {
  const page = pageRequest(ctx.args, isIntegerKey);
  return fromCache(ctx, () => pageOfTable(ctx.platform.cache.table('trades')!, page));
}

function tradesGetTicket(ctx: HandlerContext) {
  const ticket = Number(ctx.args.ticket ?? ctx.args.order);
  return fromCache(ctx, () => {
    const trade = ctx.platform.cache.get('trades', ticket);
    if (!trade) throw notFound('PF4', `order ${ticket} is not an open trade`);
    return { json: recordJson(trade) };
  });
}

function tickInfoLastSymbol(ctx: HandlerContext) {
  const symbol = String(ctx.args.symbol);
  return fromCache(ctx, () => {
    const tick = ctx.platform.cache.get('ticks', symbol);
    if (!tick) throw notFound('PF4', `no quote for symbol ${symbol}`);
    return { data: { symbol: tick.symbol, time: tick.time, bid: tick.bid, ask: tick.ask } };
  });
}

/** The server answers and then drops every manager connection; the session drops first, reconnects and resyncs. */
async function srvRestart(ctx: HandlerContext): Promise<HandlerResult> {
  const answer = await ctx.platform.session.request('SrvRestart', undefined, ctx.deadline);
  ctx.platform.session.reconnect('trading server restarting');
  return { data: answer === undefined ? true : answer };
}

export const pf4Handlers: HandlerTable = {
  'PF4.ServerTime': serverTime,
  'PF4.UserRecordGet': userRecordGet,
  'PF4.UserRecordRequest': userRecordRequest,
  'PF4.UsersRequest': usersRequest,
  'PF4.UserRecordNew': userRecordNew,
  'PF4.TradesGet': tradesGet,
  'PF4.TradesGetTicket': tradesGetTicket,
  'PF4.TickInfoLastSymbol': tickInfoLastSymbol,
  'PF4.SrvRestart': srvRestart,
};
