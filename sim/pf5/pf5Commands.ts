/**
 * The PF5 manager commands the simulator answers (besides login, Ping and ServerTime), in the world's one registry
 * with the PF5 rights table. Errors carry PF5 result codes: ErrParams for bad arguments, ErrNotfound for an unknown
 * login, ticket, symbol or group, the Usr* and Trade* codes where the spec names them, ErrPermissions for a missing
 * manager right.
 */
import * as contract from '../../shared/records/contract.js';
import { PF5_RESULT } from '../../shared/resultCodes.js';
import { tickRecord } from '../pf4/pf4Records.js';
import { readPaging, type ArgReader } from '../world/args.js';
import { CommandRegistry, type CommandNeeds } from '../world/commandRegistry.js';
import type { KeyedRecords } from '../world/keyedRecords.js';
import { matchesMask } from '../world/mask.js';
import { iso } from '../world/people.js';
import { mergePatch } from '../../shared/records/mergePatch.js';
import { CommandError } from '../world/commandError.js';
import { issueMessage, type PF5OrderType } from './pf5Records.js';
import { registerPf5AccountCommands } from './pf5Accounts.js';
import type { Pf5World } from './pf5World.js';
import { compareInt64, INT64_MAX, isInt64 } from '../../shared/int64.js';

/** Tickets and logins are int64: beyond 2^53 − 1 they are exact bigints (`shared/int64.ts`). */
const KEY_MAX = INT64_MAX;
const notFound = PF5_RESULT.ErrNotfound;
const ORDER_TYPES: PF5OrderType[] = ['Buy', 'Sell', 'BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'];

/** The PF5 rights table (EnManagerRights names). Commands not listed need only a logged-in manager. */
export const PF5_RIGHTS: Readonly<Record<string, CommandNeeds>> = {
  UserAdd: { right: 'AccManager' },
  UserUpdate: { right: 'AccManager' },
  UserRecord: { right: 'AccManager' },
  UserPasswordChange: { right: 'AccManager' },
  DealerSend: { right: 'TradesDealer' },
  DealerCancel: { right: 'TradesDealer' },
  DealerBalance: { right: 'Accountant' },
  DealUpdate: { right: 'TradesManager' },
  PositionDeleteBatch: { right: 'TradesDelete' },
  OrderDeleteBatch: { right: 'TradesDelete' },
  DealDeleteBatch: { right: 'TradesDelete' },
  GroupRecord: { right: 'CfgGroups' },
  SymbolUpdate: { right: 'CfgSymbols' },
  SymbolRecord: { right: 'CfgSymbols' },
};

export function pf5Commands(world: Pf5World): CommandRegistry {
  const registry = new CommandRegistry(PF5_RESULT.ErrParams, PF5_RIGHTS);
  const on = registry.on.bind(registry);
  const time = (args: ArgReader, raw: Record<string, unknown>, field: string, fallback: number) => {
    if (!args.has(field)) return fallback;
    const ms = typeof raw[field] === 'string' ? Date.parse(raw[field]) : Number.NaN;
    if (Number.isNaN(ms)) args.fail(`${field} must be an ISO 8601 date-time`);
    return ms;
  };
  const window = (args: ArgReader, raw: Record<string, unknown>) =>
    [time(args, raw, 'fromTime', 0), time(args, raw, 'toTime', Number.MAX_SAFE_INTEGER)] as const;
  const inGroup = (mask: string) => (login: number) => matchesMask(world.users.get(login)?.group ?? '', mask);
  const symbolsIn = (args: ArgReader) => {
    const names = args
      .string('symbol', { max: 1024 })
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    if (names.length === 0) args.fail('symbol must name at least one symbol');
    return new Set(names);
  };
  const paged = <V>(table: KeyedRecords<V>, args: ArgReader, keep: (v: V) => boolean, wire: (v: V) => unknown) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    const all = table.page(after, Number.MAX_SAFE_INTEGER).items.filter(keep);
    return { items: all.slice(0, limit).map(wire), hasMore: all.length > limit };
  };
  const position = (p: Parameters<Pf5World['positionToWire']>[0]) => world.positionToWire(p);
  const order = (o: Parameters<Pf5World['orderToWire']>[0]) => world.orderToWire(o);

  on('TimeGet', () => ({ timeZone: 0, timeServer: 'time.example.com', daylight: false, daylightState: 0 }));
  on('ManagerCurrent', (_args, ctx) => ({
    login: ctx.managerLogin,
    mailbox: `manager${ctx.managerLogin}`,
    server: 1,
    limitLogs: 'All',
    limitReports: 'All',
    right: [...ctx.rights].filter((r) => (contract.EnManagerRightsMembers as readonly string[]).includes(r)),
  }));

  registerPf5AccountCommands(registry, world);

  // ---- positions ----
  on('PositionsRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    const page = world.positions.page(after, limit);
    return { items: page.items.map(position), hasMore: page.hasMore };
  });
  on('PositionGetByTickets', (args) =>
    args
      .keyList('tickets', KEY_MAX)
      .map((t) => world.positions.get(t))
      .filter((p) => p !== undefined)
      .map(position),
  );
  on('PositionGetByLogins', (args) =>
    args
      .keyList('logins', KEY_MAX)
      .flatMap((l) => world.positionsOf(l))
      .sort((a, b) => compareInt64(a.position, b.position))
      .map(position),
  );
  on('PositionGet', (args) => world.positionsOf(args.id('login', { min: 1 })).map(position));
  on('PositionRequestByGroup', (args) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    return world.positions
      .values()
      .filter((p) => member(p.login))
      .map(position);
  });
  on('PositionGetBySymbol', (args) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    const symbols = symbolsIn(args);
    return world.positions
      .values()
      .filter((p) => member(p.login) && symbols.has(p.symbol))
      .map(position);
  });
  on('PositionByGroup', (args) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    return paged(world.positions, args, (p) => member(p.login), position);
  });
  on('PositionDeleteBatch', (args) => {
    world.engine.deletePositions(args.keyList('tickets', KEY_MAX));
    return true;
  });

  // ---- orders ----
  on('OrdersRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    const page = world.orders.page(after, limit);
    return { items: page.items.map(order), hasMore: page.hasMore };
  });
  on('OrderGetByTickets', (args) =>
    args
      .keyList('tickets', KEY_MAX)
      .map((t) => world.orders.get(t))
      .filter((o) => o !== undefined)
      .map(order),
  );
  on('OrderRequestByTickets', (args) =>
    args
      .keyList('tickets', KEY_MAX)
      .map((t) => world.orders.get(t))
      .filter((o) => o !== undefined)
      .map(order),
  );
  on('OrderGet', (args) => {
    const ticket = args.id('ticket', { min: 1 });
    const found = world.orders.get(ticket);
    if (!found) throw new CommandError(notFound, `order ${ticket} not found`);
    return order(found);
  });
  on('OrderGetByLogins', (args) => {
    const logins = new Set(args.keyList('logins', KEY_MAX));
    return world.orders
      .values()
      .filter((o) => logins.has(o.login))
      .map(order);
  });
  for (const cmd of ['OrderGetByGroup', 'OrderRequestByGroup']) {
    on(cmd, (args) => {
      const member = inGroup(args.string('mask', { max: 1024 }));
      return world.orders
        .values()
        .filter((o) => member(o.login))
        .map(order);
    });
  }
  for (const cmd of ['OrderGetBySymbol', 'OrderRequestByGroupSymbol']) {
    on(cmd, (args) => {
      const member = inGroup(args.string('mask', { max: 1024 }));
      const symbols = symbolsIn(args);
      return world.orders
        .values()
        .filter((o) => member(o.login) && symbols.has(o.symbol))
        .map(order);
    });
  }
  on('OrderByGroup', (args) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    return paged(world.orders, args, (o) => member(o.login), order);
  });
  on('OrderDeleteBatch', (args) => {
    world.engine.deleteOrders(args.keyList('tickets', KEY_MAX));
    return true;
  });
  on('HistoryRequest', (args, _ctx, raw) => {
    const login = args.id('login', { min: 1 });
    const [from, to] = window(args, raw);
    return world.engine.historyOrders.values().filter((o) => o.login === login && within(o.timeSetup, from, to));
  });
  on('HistoryRequestByGroup', (args, _ctx, raw) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    const [from, to] = window(args, raw);
    return world.engine.historyOrders.values().filter((o) => member(o.login) && within(o.timeSetup, from, to));
  });
  on('HistoryRequestByTickets', (args) =>
    args
      .keyList('tickets', KEY_MAX)
      .map((t) => world.engine.historyOrders.get(t))
      .filter((o) => o !== undefined),
  );

  // ---- deals ----
  on('DealsRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    return world.deals.page(after, limit);
  });
  on('DealRequestByTickets', (args) =>
    args
      .keyList('tickets', KEY_MAX)
      .map((t) => world.deals.get(t))
      .filter((d) => d !== undefined),
  );
  on('DealRequestByTicket', (args) => {
    const ticket = args.id('ticket', { min: 1 });
    return (
      world.deals.get(ticket) ??
      (() => {
        throw new CommandError(notFound, `deal ${ticket} not found`);
      })()
    );
  });
  on('DealRequest', (args, _ctx, raw) => {
    const login = args.id('login', { min: 1 });
    const [from, to] = window(args, raw);
    return world.deals.values().filter((d) => d.login === login && within(d.time, from, to));
  });
  on('DealRequestByLogins', (args, _ctx, raw) => {
    const logins = new Set(args.keyList('logins', KEY_MAX));
    const [from, to] = window(args, raw);
    return world.deals.values().filter((d) => logins.has(d.login) && within(d.time, from, to));
  });
  on('DealRequestByGroup', (args, _ctx, raw) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    const [from, to] = window(args, raw);
    return world.deals.values().filter((d) => member(d.login) && within(d.time, from, to));
  });
  on('DealRequestByGroupSymbol', (args, _ctx, raw) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    const symbols = symbolsIn(args);
    const [from, to] = window(args, raw);
    return world.deals.values().filter((d) => member(d.login) && symbols.has(d.symbol) && within(d.time, from, to));
  });
  on('DealByGroup', (args) => {
    const member = inGroup(args.string('mask', { max: 1024 }));
    return paged(
      world.deals,
      args,
      (d) => member(d.login),
      (d) => d,
    );
  });
  on('DealUpdate', (args) => {
    const record = args.object('record');
    const parsed = contract.PF5Deal.safeParse(record);
    if (!parsed.success) args.fail(issueMessage('record', parsed.error));
    const ticket = record.deal;
    if (!isInt64(ticket)) args.fail('record.deal is required');
    const current = world.deals.get(ticket as number);
    if (!current) throw new CommandError(notFound, `deal ${String(ticket)} not found`);
    if (record.login !== undefined && record.login !== null && record.login !== current.login) {
      args.fail(
        `record.login: deal ${current.deal} belongs to login ${current.login} and cannot move to another account`,
      );
    }
    // Only the supplied fields are applied; absent and null fields keep the deal's values.
    const updated = { ...current };
    for (const [field, value] of Object.entries(record)) {
      if (value !== undefined && value !== null) (updated as Record<string, unknown>)[field] = value;
    }
    world.deals.set(updated.deal, updated);
    world.emit('deals', 'update', updated);
    return updated;
  });
  on('DealDeleteBatch', (args) => {
    world.engine.deleteDeals(args.keyList('tickets', KEY_MAX));
    return true;
  });

  // ---- dealing ----
  on('DealerSend', (args, _ctx, raw) => {
    const type = raw.type as PF5OrderType;
    if (!ORDER_TYPES.includes(type)) args.fail(`type must be one of ${ORDER_TYPES.join(', ')}`);
    return world.engine.send({
      login: args.id('login', { min: 1 }),
      symbol: args.string('symbol', { max: 32 }),
      type,
      volume: args.int('volume', { min: 1 }),
      price: args.optionalNumber('price'),
      priceSL: args.optionalNumber('priceSL') ?? 0,
      priceTP: args.optionalNumber('priceTP') ?? 0,
      position: args.optionalId('position', { min: 1 }),
      expiration: args.has('expiration') ? time(args, raw, 'expiration', 0) : undefined,
      comment: args.optionalString('comment', { max: 31 }) ?? '',
    });
  });
  on('DealerCancel', (args) => {
    world.engine.cancel(args.id('order', { min: 1 }));
    return true;
  });
  on('DealerBalance', (args, _ctx, raw) => {
    const type = raw.type ?? 'Balance';
    if (type !== 'Balance' && type !== 'Credit') args.fail('type must be Balance or Credit');
    return world.engine.balance(
      args.id('login', { min: 1 }),
      type as 'Balance' | 'Credit',
      args.number('amount'),
      args.optionalString('comment', { max: 31 }) ?? '',
    );
  });

  // ---- groups, symbols, prices ----
  const group = (name: string) =>
    world.groups.get(name) ??
    (() => {
      throw new CommandError(notFound, `group ${name} not found`);
    })();
  const symbol = (name: string) =>
    world.symbolRecord(name) ??
    (() => {
      throw new CommandError(notFound, `symbol ${name} not found`);
    })();
  on('GroupsRequest', () => [...world.groups.values()]);
  on('GroupGet', (args) => group(args.string('group', { max: 64 })));
  on('GroupRequest', (args) => group(args.string('group', { max: 64 })));
  on('GroupRequestArray', (args) => {
    const mask = args.string('mask', { max: 1024 });
    return [...world.groups.values()].filter((g) => matchesMask(g.group as string, mask));
  });
  on('GroupRecord', (args) => {
    const name = args.string('group', { max: 64 });
    const patch = args.object('patch');
    for (const field of ['newsLang', 'commissions']) {
      if (patch[field] !== undefined && patch[field] !== null)
        args.fail(`patch.${field}: the setter is not implemented`);
    }
    if (patch.group !== undefined && patch.group !== null && patch.group !== name)
      args.fail('patch.group: the group name cannot change');
    const merged = mergePatch(group(name), patch, requiredKept(GROUP_REQUIRED, args));
    const parsed = contract.PF5ConGroup.safeParse(merged);
    if (!parsed.success) args.fail(issueMessage('patch', parsed.error));
    world.groups.set(name, merged);
    world.emit('groups', 'update', merged);
    world.engine.onGroupChanged(name);
    return merged;
  });
  on('SymbolsRequest', () => world.symbols);
  on('SymbolGet', (args) => symbol(args.string('symbol', { max: 32 })));
  on('SymbolRequestArray', (args) => {
    const mask = args.string('mask', { max: 1024 });
    const groupName = args.optionalString('group', { max: 64 });
    const forGroup = groupName === undefined ? undefined : group(groupName);
    const matching = world.symbols.filter(
      (s) => matchesMask(s.path as string, mask) || matchesMask(s.symbol as string, mask),
    );
    // With a group, each symbol as that group's accounts trade it (Pf5World.symbolForGroup); without, the base settings.
    return forGroup ? matching.map((s) => world.symbolForGroup(s, forGroup)) : matching;
  });
  const replaceSymbol = (record: Record<string, unknown>) => {
    world.symbols = world.symbols.map((s) => (s.symbol === record.symbol ? record : s));
    world.emit('symbols', 'update', record);
    return record;
  };
  on('SymbolUpdate', (args) => {
    const current = symbol(args.string('symbol', { max: 32 }));
    const record = args.object('record');
    const next = { ...current };
    for (const field of ['execMode', 'color', 'stopsLevel', 'spreadBalance', 'spreadDiff', 'spreadDiffBalance']) {
      if (record[field] !== undefined && record[field] !== null) next[field] = record[field];
    }
    const parsed = contract.PF5Symbol.safeParse(next);
    if (!parsed.success) args.fail(issueMessage('record', parsed.error));
    return replaceSymbol(next);
  });
  on('SymbolRecord', (args) => {
    const name = args.string('symbol', { max: 32 });
    const patch = args.object('patch');
    for (const field of ['currencyBaseDigits', 'currencyProfitDigits', 'currencyMarginDigits', 'multiply']) {
      if (patch[field] !== undefined) args.fail(`patch.${field} is read-only`);
    }
    for (const field of ['sessionQuote', 'sessionTrade']) {
      if (patch[field] !== undefined && patch[field] !== null)
        args.fail(`patch.${field}: the setter is not implemented`);
    }
    if (patch.symbol !== undefined && patch.symbol !== null && patch.symbol !== name)
      args.fail('patch.symbol: the symbol name cannot change');
    const merged = mergePatch(symbol(name), patch, requiredKept(SYMBOL_REQUIRED, args));
    const parsed = contract.PF5Symbol.safeParse(merged);
    if (!parsed.success) args.fail(issueMessage('patch', parsed.error));
    return replaceSymbol(merged);
  });
  on('TickLast', (args) => {
    const name = args.optionalString('symbol', { max: 32 });
    if (name === undefined) return world.feed.allQuotes().map(tickRecord);
    const quote = world.feed.quote(name);
    if (!quote) throw new CommandError(notFound, `symbol ${name} not found`);
    return tickRecord(quote);
  });
  on('ChartRequest', (args, _ctx, raw) => {
    const name = args.string('symbol', { max: 32 });
    symbol(name);
    const [from, to] = window(args, raw);
    return world.chart
      .barsOf(name, 'M1')
      .filter((b) => b.time >= from && b.time <= to)
      .map((b) => ({
        dateTime: iso(b.time),
        open: b.open,
        high: b.high,
        low: b.low,
        close: b.close,
        tickVolume: b.volume,
        spread: b.spread,
        volume: 0,
      }));
  });

  return registry;
}

/**
 * The null rule of the group and symbol patches. Every PF5ConGroup and PF5Symbol member is optional, so unlike an
 * account these records may lack a field and a null member removes it; the record's name is its identity and is
 * never removed.
 */
/** Group fields the server needs to account and trade: a patch may change them but not remove them. */
const GROUP_REQUIRED = new Set(['group', 'currency', 'marginMode', 'marginCall', 'marginStopOut']);
/** Symbol fields dealing, valuation and swaps read: a patch may change them but not remove them. */
const SYMBOL_REQUIRED = new Set([
  'symbol',
  'digits',
  'point',
  'contractSize',
  'tradeMode',
  'volumeMin',
  'volumeMax',
  'volumeStep',
  'stopsLevel',
  'currencyBase',
  'currencyProfit',
  'currencyMargin',
  'swapMode',
  'swapLong',
  'swapShort',
]);

/** A merge-patch null for a required field is refused, naming it; other nulls remove the field. */
function requiredKept(required: ReadonlySet<string>, args: ArgReader): (path: string) => undefined {
  return (path) => {
    if (required.has(path)) args.fail(`patch.${path} is required and cannot be removed`);
    return undefined;
  };
}

function within(time: string, from: number, to: number): boolean {
  const t = Date.parse(time);
  return t >= from && t <= to;
}
