/**
 * The PF5 manager commands the simulator answers (besides login, Ping and ServerTime). Errors carry PF5 result
 * codes: ErrParams for bad arguments, ErrNotfound for an unknown login, ticket, symbol or group.
 */
import { PF5_RESULT } from '../../shared/resultCodes.js';
import { tickRecord } from '../pf4/pf4Records.js';
import { readPaging } from '../world/args.js';
import { CommandError } from '../world/simWorld.js';
import { CommandRegistry } from '../world/commandRegistry.js';
import type { ArgReader } from '../world/args.js';
import type { Pf5World } from './pf5World.js';

const KEY_MAX = Number.MAX_SAFE_INTEGER;
const notFound = PF5_RESULT.ErrNotfound;

export function pf5Commands(world: Pf5World): CommandRegistry {
  const table = new CommandRegistry(PF5_RESULT.ErrParams);
  const on = (cmd: string, handler: (args: ArgReader) => unknown) => table.on(cmd, (args) => handler(args));
  const keys = (args: ArgReader, field: string) => args.intArray(field, { min: 1, max: KEY_MAX, maxItems: 100_000 });

  on('TimeGet', () => ({ timeZone: 0, timeServer: 'time.example.com', daylight: false, daylightState: 0 }));

  on('UserRequest', (args) => {
    const login = args.int('login', { min: 1 });
    const user = world.users.get(login);
    if (!user) throw new CommandError(notFound, `login ${login} not found`);
    return user;
  });
  on('UserGetByLogins', (args) => keys(args, 'logins').map((l) => world.users.get(l)).filter((u) => u !== undefined));
  on('UsersRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    return world.users.page(after, limit);
  });

  on('PositionsRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    const page = world.positions.page(after, limit);
    return { items: page.items.map((p) => world.positionToWire(p)), hasMore: page.hasMore };
  });
  on('PositionGetByTickets', (args) => keys(args, 'tickets').map((t) => world.positions.get(t))
    .filter((p) => p !== undefined).map((p) => world.positionToWire(p)));
  on('PositionGetByLogins', (args) => {
    const logins = new Set(keys(args, 'logins'));
    return world.positions.values().filter((p) => logins.has(p.login)).map((p) => world.positionToWire(p));
  });

  on('OrdersRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    const page = world.orders.page(after, limit);
    return { items: page.items.map((o) => world.orderToWire(o)), hasMore: page.hasMore };
  });
  on('OrderGetByTickets', (args) => keys(args, 'tickets').map((t) => world.orders.get(t))
    .filter((o) => o !== undefined).map((o) => world.orderToWire(o)));

  on('DealsRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    return world.deals.page(after, limit);
  });
  on('DealRequestByTickets', (args) => keys(args, 'tickets').map((t) => world.deals.get(t)).filter((d) => d !== undefined));

  on('SymbolsRequest', () => world.symbols);
  on('SymbolGet', (args) => {
    const symbol = args.string('symbol', { max: 32 });
    const found = world.symbols.find((s) => s.symbol === symbol);
    if (!found) throw new CommandError(notFound, `symbol ${symbol} not found`);
    return found;
  });
  on('GroupsRequest', () => [...world.groups.values()]);
  on('GroupGet', (args) => {
    const group = args.string('group', { max: 64 });
    const found = world.groups.get(group);
    if (!found) throw new CommandError(notFound, `group ${group} not found`);
    return found;
  });
  on('TickLast', (args) => {
    const symbol = args.optionalString('symbol', { max: 32 });
    if (symbol === undefined) return world.feed.allQuotes().map(tickRecord);
    const quote = world.feed.quote(symbol);
    if (!quote) throw new CommandError(notFound, `symbol ${symbol} not found`);
    return tickRecord(quote);
  });

  return table;
}
