/**
 * PF4 symbol commands: the symbol configuration (read, full-replace update keeping sessions and server-derived
 * fields, delete and shift by position), the weekday sessions, the active set (SymbolAdd, SymbolHide; SymbolsRequest,
 * the resync and the symbols events cover the active symbols only, CfgRequestSymbol every configured one), quick
 * changes, manual ticks and last quotes.
 */
import { PF4SymbolChangeRequest, PF4SymbolConfigUpdate } from '../../../shared/records/contract.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import { CommandError } from '../../world/commandError.js';
import { tickRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { bad, notFound, parseRecord } from './common.js';

/** Fields CfgUpdateSymbol leaves as the server has them. */
const SERVER_DERIVED = [
  'symbol',
  'count',
  'countOriginal',
  'point',
  'multiply',
  'bidTickValue',
  'askTickValue',
  'filterCounter',
];

export function registerMarketCommands(registry: CommandRegistry, world: Pf4World): void {
  const symbol = (name: string) => world.symbolConfig(name) ?? notFound(`symbol ${name}`);

  // The symbols events follow the active set: a hidden symbol's configuration changes quietly, and SymbolAdd brings it
  // back as it then stands.
  const replaceSymbol = (record: Record<string, unknown>) => {
    world.symbols.upsert(record);
    const instrument = world.instrumentBySymbol.get(record.symbol as string);
    // The feed quotes with the configured spread from the next tick on.
    if (instrument && typeof record.spread === 'number') instrument.spread = record.spread;
    if (!world.hiddenSymbols.has(record.symbol as string)) world.emit('symbols', 'update', record);
  };

  registry.on('TickInfoLast', (args) => {
    const name = args.optionalString('symbol', { max: 12 });
    if (name === undefined)
      return world.feed
        .allQuotes()
        .filter((q) => world.symbols.indexOf(q.symbol) >= 0)
        .map(tickRecord);
    const quote = world.feed.quote(name);
    if (!quote || world.symbols.indexOf(name) < 0) notFound(`symbol ${name}`);
    return tickRecord(quote);
  });

  registry.on('SymbolsRequest', () => world.activeSymbols());
  registry.on('SymbolRequest', (args) => symbol(args.string('symbol', { max: 12 })));
  registry.on('CfgRequestSymbol', (args) => {
    const name = args.optionalString('symbol', { max: 12 });
    return name === undefined ? world.symbols.list() : symbol(name);
  });

  registry.on('CfgUpdateSymbol', (args) => {
    const name = args.string('symbol', { max: 12 });
    const current = symbol(name);
    const update = parseRecord<Record<string, unknown>>(PF4SymbolConfigUpdate, args.object('record'), 'record');
    const merged: Record<string, unknown> = { ...current };
    for (const [field, value] of Object.entries(update)) {
      if (value !== undefined && value !== null && !SERVER_DERIVED.includes(field)) merged[field] = value;
    }
    replaceSymbol(merged);
    world.journal(`symbol ${name} updated`);
    return merged;
  });

  registry.on('CfgDeleteSymbol', (args) => {
    const pos = args.int('pos', { min: 0 });
    const name = world.symbols.at(pos).symbol as string;
    if (world.trades.values().some((t) => t.symbol === name))
      throw new CommandError(bad, `symbol ${name} has open trades`);
    world.symbols.delete(pos);
    world.sessions.delete(name);
    // A hidden symbol already left the active set, and with it the broker's view; its sessions are kept for every
    // configured symbol.
    if (!world.hiddenSymbols.delete(name)) world.emit('symbols', 'delete', { symbol: name });
    world.emit('symbolSessions', 'delete', { symbol: name });
    world.journal(`symbol ${name} deleted`);
    return true;
  });

  registry.on('CfgShiftSymbol', (args) => {
    world.symbols.shift(args.int('pos', { min: 0 }), args.int('shift'));
    return true;
  });

  registry.on('CfgShiftGroup', (args) => {
    world.groups.shift(args.int('pos', { min: 0 }), args.int('shift'));
    return true;
  });

  registry.on('SymbolSessionsGet', (args) => {
    const name = args.string('symbol', { max: 12 });
    symbol(name);
    return world.sessions.get(name) ?? [];
  });

  registry.on('SymbolAdd', (args) => {
    const name = args.string('symbol', { max: 12 });
    const record = symbol(name);
    if (world.hiddenSymbols.delete(name)) {
      world.emit('symbols', 'add', record);
      // Its summary cannot be derived from the symbol record: it comes whole.
      const info = world.symbolInfo(name);
      if (info) world.emit('symbolInfo', 'update', info);
    }
    return true;
  });

  registry.on('SymbolHide', (args) => {
    const name = args.string('symbol', { max: 12 });
    symbol(name);
    if (!world.hiddenSymbols.has(name)) {
      world.hiddenSymbols.add(name);
      world.emit('symbols', 'delete', { symbol: name });
    }
    return true;
  });

  // The catalog is handed over afresh: the broker gets every active symbol as it stands, in catalog order.
  registry.on('SymbolsRefresh', () => {
    const catalog = world.activeSymbols();
    for (const record of catalog) world.emit('symbols', 'update', record);
    world.journal(`symbols refreshed: ${catalog.length}`);
    return true;
  });

  registry.on('SymbolChange', (args) => {
    const change = parseRecord<Record<string, unknown>>(PF4SymbolChangeRequest, args.object('record'), 'record');
    if (typeof change.symbol !== 'string' || change.symbol === '') args.fail('record.symbol is required');
    if ((change.symbol as string).length > 12) args.fail('record.symbol must be at most 12 characters');
    for (const field of ['spread', 'stopsLevel'] as const) {
      if (typeof change[field] === 'number' && change[field] < 0) args.fail(`record.${field} must be 0 or positive`);
    }
    const merged: Record<string, unknown> = { ...symbol(change.symbol as string) };
    for (const field of ['spread', 'spreadBalance', 'stopsLevel'] as const)
      if (typeof change[field] === 'number') merged[field] = change[field];
    if (typeof change.color === 'number') merged.backgroundColor = change.color;
    if (typeof change.smoothing === 'number') merged.filterSmoothing = change.smoothing;
    if (typeof change.exeMode === 'string') merged.symbolExecMode = change.exeMode;
    replaceSymbol(merged);
    return true;
  });

  registry.on('SymbolSendTick', (args) => {
    const name = args.string('symbol', { max: 12 });
    symbol(name);
    const bid = args.number('bid');
    const ask = args.number('ask');
    if (bid <= 0 || ask < bid) args.fail('bid must be positive and ask at least bid');
    if (world.hiddenSymbols.has(name)) throw new CommandError(bad, `symbol ${name} is not in the active set`);
    world.feed.inject(name, bid, ask);
    return true;
  });
}
