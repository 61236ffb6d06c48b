/**
 * The PF4 manager commands the simulator answers (besides login, Ping, ServerTime and SrvRestart, which the
 * protocol layer handles for every family). Errors carry PF4 result codes: InvalidData for bad arguments, unknown
 * keys and collisions, trade codes for refused trade transactions.
 */
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { PF4UserCreate, PF4TradeTransaction } from '../../shared/records/contract.js';
import { roundTo } from '../feed/instruments.js';
import { ArgReader, readPaging } from '../world/args.js';
import { iso } from '../world/people.js';
import { CommandError, type CommandHandler } from '../world/simWorld.js';
import { isPending, tickRecord, type PF4Command, type PF4UserRecord } from './pf4Records.js';
import type { Pf4World } from './pf4World.js';

const INT32_MAX = 2147483647;
const bad = PF4_RESULT.InvalidData;

export function pf4Commands(world: Pf4World): Map<string, CommandHandler> {
  const table = new Map<string, CommandHandler>();
  const on = (cmd: string, handler: (args: ArgReader, raw: Record<string, unknown>) => unknown) =>
    table.set(cmd, (raw) => handler(new ArgReader(raw, bad), raw));

  on('UserRecordsRequest', (args) => {
    if (!args.has('logins')) return world.users.values();
    return args.intArray('logins', { min: 1, max: INT32_MAX, maxItems: 100_000 })
      .map((login) => world.users.get(login)).filter((u) => u !== undefined);
  });

  on('UserRecordRequest', (args) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    const user = world.users.get(login);
    if (!user) throw new CommandError(bad, `login ${login} not found`);
    return user;
  });

  on('UsersRequest', (args) => {
    const { after, limit } = readPaging(args, INT32_MAX);
    return world.users.page(after, limit);
  });

  on('UserRecordNew', (args) => createUser(world, args.object('record')));

  on('TradesRequest', (args) => {
    const { after, limit } = readPaging(args, INT32_MAX);
    const page = world.trades.page(after, limit);
    return { items: page.items.map((row) => world.tradeToWire(row)), hasMore: page.hasMore };
  });

  on('TradeRecordsRequest', (args) => args.intArray('orders', { min: 1, max: INT32_MAX, maxItems: 100_000 })
    .map((order) => world.trades.get(order)).filter((t) => t !== undefined).map((row) => world.tradeToWire(row)));

  on('TradeRecordRequest', (args) => {
    const order = args.int('order', { min: 1, max: INT32_MAX });
    const row = world.trades.get(order);
    if (!row) throw new CommandError(bad, `order ${order} not found`);
    return world.tradeToWire(row);
  });

  on('TradesUserRequest', (args) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    return world.trades.values().filter((t) => t.login === login).map((row) => world.tradeToWire(row));
  });

  on('TickInfoLast', (args) => {
    const symbol = args.optionalString('symbol', { max: 12 });
    if (symbol === undefined) return world.feed.allQuotes().map(tickRecord);
    const quote = world.feed.quote(symbol);
    if (!quote) throw new CommandError(bad, `symbol ${symbol} not found`);
    return tickRecord(quote);
  });

  on('SymbolsRequest', () => world.symbols);

  on('SymbolRequest', (args) => {
    const symbol = args.string('symbol', { max: 12 });
    const found = world.symbols.find((s) => s.symbol === symbol);
    if (!found) throw new CommandError(bad, `symbol ${symbol} not found`);
    return found;
  });

  on('GroupsRequest', () => [...world.groups.values()]);

  on('GroupRecordRequest', (args) => {
    const group = args.string('group', { max: 16 });
    const found = world.groups.get(group);
    if (!found) throw new CommandError(bad, `group ${group} not found`);
    return found;
  });

  on('TradeTransaction', (args, raw) => tradeTransaction(world, args, raw));

  return table;
}

function createUser(world: Pf4World, record: Record<string, unknown>): PF4UserRecord {
  const parsed = PF4UserCreate.safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length > 0 ? `record.${issue.path.join('.')}` : (issue.message.match(/"(\w+)"/)?.[1] ?? 'record');
    throw new CommandError(bad, `${field}: ${issue.message}`);
  }
  const input = parsed.data as Record<string, unknown>;
  const requested = typeof input.login === 'number' ? input.login : 0;
  if (requested < 0) throw new CommandError(bad, 'record.login must be 0 or positive');
  if (requested > 0 && world.users.has(requested)) throw new CommandError(bad, `login ${requested} already exists`);
  const groupName = typeof input.group === 'string' ? input.group : '';
  if (!groupName) throw new CommandError(bad, 'record.group is required');
  const group = world.groups.get(groupName);
  if (!group) throw new CommandError(bad, `record.group: group ${groupName} does not exist`);
  const name = typeof input.name === 'string' ? input.name : '';
  if (!name) throw new CommandError(bad, 'record.name is required');
  const leverage = typeof input.leverage === 'number' && input.leverage > 0 ? input.leverage : group.defaultLeverage;
  const text = (field: string) => (typeof input[field] === 'string' ? (input[field] as string) : '');
  const num = (field: string, fallback: number) => (typeof input[field] === 'number' ? (input[field] as number) : fallback);
  const now = iso(Date.now());
  const user: PF4UserRecord = {
    login: requested > 0 ? requested : world.nextFreeLogin(), group: groupName, name,
    registrationDate: now, lastDate: now, externalId: text('externalId'), status: text('status'),
    country: text('country'), city: text('city'), state: text('state'), zipCode: text('zipCode'),
    address: text('address'), leadSource: text('leadSource'), phone: text('phone'), email: text('email'),
    comment: text('comment'), leverage, agentAccount: num('agentAccount', 0), lastIP: 0,
    balance: 0, credit: 0, prevMonthBalance: 0, prevBalance: 0, prevMonthEquity: 0, prevEquity: 0,
    interestRate: num('interestRate', 0), taxes: num('taxes', 0), enableFlags: num('enableFlags', 1),
    sendReports: num('sendReports', 1), mqid: num('mqid', 0), userColor: num('userColor', -1),
  };
  if (user.login > INT32_MAX) throw new CommandError(bad, 'no free login left');
  world.addUser(user);
  return user;
}

const OPEN_TYPES = new Set(['BrOrderOpen', 'OrderOpen']);
const CLOSE_TYPES = new Set(['BrOrderClose', 'OrderClose', 'BrOrderDelete', 'OrderDelete']);

/**
 * Dealer-style trade transactions: open a market or pending order for an account (`orderBy` is the login) at the
 * current quote, or close/delete an open one by `order`. Arguments follow the PF4TradeTransaction record.
 */
function tradeTransaction(world: Pf4World, args: ArgReader, raw: Record<string, unknown>): unknown {
  const parsed = PF4TradeTransaction.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CommandError(bad, `${issue.path.join('.') || 'args'}: ${issue.message}`);
  }
  const type = args.string('tradeTransactionType');
  if (CLOSE_TYPES.has(type)) {
    const order = args.int('order', { min: 1, max: INT32_MAX });
    const closed = world.closeTrade(order);
    if (!closed) throw new CommandError(bad, `order ${order} not found`);
    return closed;
  }
  if (!OPEN_TYPES.has(type)) {
    args.fail(`tradeTransactionType must be one of ${[...OPEN_TYPES, ...CLOSE_TYPES].join(', ')}`);
  }
  const login = args.int('orderBy', { min: 1, max: INT32_MAX });
  const user = world.users.get(login);
  if (!user) throw new CommandError(bad, `orderBy: login ${login} not found`);
  const symbol = args.string('symbol', { max: 12 });
  const instrument = world.instrumentBySymbol.get(symbol);
  const quote = world.feed.quote(symbol);
  if (!instrument || !quote) throw new CommandError(bad, `symbol ${symbol} not found`);
  const command = args.string('tradeCommand') as PF4Command;
  if (!['Buy', 'Sell', 'BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'].includes(command)) {
    args.fail('tradeCommand must be Buy, Sell, BuyLimit, SellLimit, BuyStop or SellStop');
  }
  const volume = args.int('volume', { min: 1, max: 100_000 });
  if (volume < 1) throw new CommandError(PF4_RESULT.TradeBadVolume, 'volume must be at least 1 (0.01 lot)');
  const isBuy = command.startsWith('Buy');
  let openPrice = isBuy ? quote.ask : quote.bid;
  if (isPending(command)) {
    const price = args.number('price');
    const valid = command === 'BuyLimit' || command === 'SellStop' ? price < quote.bid : price > quote.ask;
    if (!valid) throw new CommandError(PF4_RESULT.TradeBadPrices, `price ${price} is on the wrong side of the market for ${command}`);
    openPrice = roundTo(price, instrument.digits);
  }
  const now = iso(Date.now());
  const trade = world.openTrade({
    login, symbol, digits: instrument.digits, tradeCommand: command, volume, openPrice,
    sl: args.optionalNumber('sl') ?? 0, tp: args.optionalNumber('tp') ?? 0, openTime: now,
    ...(isPending(command) && args.has('expiration') ? { expiration: String(raw.expiration) } : {}),
    commission: 0, storage: 0, magic: 0, comment: args.optionalString('comment', { max: 31 }) ?? '',
    tradeRecordReason: 'Dealer', timeStamp: now,
  });
  return world.tradeToWire(trade);
}
