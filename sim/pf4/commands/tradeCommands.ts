/**
 * PF4 trade commands: reads of open trades and history, the trade transaction (open, modify, close, delete,
 * activate, balance and credit), stop checks, the rollback buffer, margin levels, the balance check and fix, and the
 * administrator's trade edits.
 */

import { PF4TradeTransaction, PF4TradeUpdate } from '../../../shared/records/contract.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import type { ArgReader } from '../../world/args.js';
import { readPaging } from '../../world/args.js';
import { CommandError } from '../../world/commandError.js';
import { isPending, type PF4Command } from '../pf4Records.js';
import type { OpenRequest } from '../trading/tradeChecks.js';
import type { Pf4World } from '../pf4World.js';
import { INT32_MAX, bad, notFound, optionalBool, optionalTime, parseRecord, recordReader } from './common.js';

const OPEN = new Set(['BrOrderOpen', 'OrderOpen', 'OrderImOpen', 'OrderMkOpen', 'OrderReqOpen', 'OrderPendingOpen']);
const CLOSE = new Set(['BrOrderClose', 'OrderClose', 'OrderImClose', 'OrderMkClose', 'OrderReqClose']);
const MODIFY = new Set(['BrOrderModify', 'OrderModify']);
const DELETE = new Set(['BrOrderDelete', 'OrderDelete']);
const ACTIVATE = new Set(['BrOrderActivate']);
const BALANCE = new Set(['BrBalance']);
export const TRANSACTION_TYPES = [...OPEN, ...CLOSE, ...MODIFY, ...DELETE, ...ACTIVATE, ...BALANCE];
const COMMANDS: PF4Command[] = ['Buy', 'Sell', 'BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'];

/** The right a trade transaction needs: balance and credit entries move money. */
export function transactionRight(raw: Record<string, unknown>): string {
  return raw.tradeCommand === 'Balance' || raw.tradeCommand === 'Credit' || raw.tradeTransactionType === 'BrBalance'
    ? 'money'
    : 'trades';
}

export function registerTradeCommands(registry: CommandRegistry, world: Pf4World): void {
  const wire = (order: number) => {
    const row = world.trades.get(order);
    return row ? world.tradeToWire(row) : undefined;
  };

  registry.on('TradesRequest', (args) => {
    const { after, limit } = readPaging(args, INT32_MAX);
    const page = world.trades.page(after, limit);
    return { items: page.items.map((row) => world.tradeToWire(row)), hasMore: page.hasMore };
  });

  registry.on('TradeRecordsRequest', (args) =>
    args
      .intArray('orders', { min: 1, max: INT32_MAX, maxItems: 100_000 })
      .map(wire)
      .filter((t) => t !== undefined),
  );

  registry.on('TradeRecordRequest', (args) => {
    const order = args.int('order', { min: 1, max: INT32_MAX });
    return wire(order) ?? notFound(`order ${order}`);
  });

  registry.on('TradesUserRequest', (args) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    if (!world.users.has(login)) notFound(`login ${login}`);
    return world.engine
      .openOrdersOf(login)
      .map(wire)
      .filter((t) => t !== undefined);
  });

  registry.on('TradesUserHistory', (args, _ctx, raw) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    if (!world.users.has(login)) notFound(`login ${login}`);
    return world.engine.history(login, optionalTime(args, raw, 'fromTime') ?? 0, optionalTime(args, raw, 'toTime'));
  });

  registry.on('TradeTransaction', (args, _ctx, raw) => transaction(world, args, raw));

  // The query's `price` is the reference (market) price; the body, `record`, is the transaction, whose own `price` is a
  // pending order's open price.
  registry.on('TradeCheckStops', (args) => {
    const reference = args.optionalNumber('price');
    const record = args.object('record');
    const tx = parseRecord<Record<string, unknown>>(PF4TradeTransaction, record, 'record');
    const fields = recordReader(record, 'record');
    const request = openRequest(fields, tx, 'Dealer');
    if (isPending(request.command) && request.price === undefined) fields.fail('price is required for a pending order');
    world.engine.checkRequestStops(request, reference);
    return true;
  });

  registry.on('TradeClearRollback', (args) =>
    world.engine.clearRollback(args.int('order', { min: 1, max: INT32_MAX })),
  );

  registry.on('MarginLevelRequest', (args) => world.engine.marginLevel(args.int('login', { min: 1, max: INT32_MAX })));

  registry.on('MarginsRequest', () => world.engine.loginsWithTrades().map((login) => world.engine.marginLevel(login)));

  registry.on('AdmBalanceCheck', (args) => {
    if (args.has('login')) {
      const login = args.int('login', { min: 1, max: INT32_MAX });
      return { login, diff: world.engine.balanceDiff(login) };
    }
    const logins = args.has('logins')
      ? args.intArray('logins', { min: 1, max: INT32_MAX, maxItems: 100_000 })
      : world.users.keys();
    return logins
      .filter((login) => world.users.has(login))
      .map((login) => ({ login, diff: world.engine.balanceDiff(login) }))
      .filter((d) => d.diff !== 0);
  });

  registry.on('AdmBalanceFix', (args) => {
    const logins = args.intArray('logins', { min: 1, max: INT32_MAX, maxItems: 100_000 });
    for (const login of logins) if (!world.users.has(login)) notFound(`login ${login}`);
    for (const login of logins) world.engine.fixBalance(login);
    return true;
  });

  registry.on('AdmTradeRecordModify', (args) => {
    const order = args.int('ticket', { min: 1, max: INT32_MAX });
    const update = parseRecord<Record<string, unknown>>(PF4TradeUpdate, args.object('record'), 'record');
    if (update.order !== undefined && update.order !== order) args.fail('record.order must match ticket');
    for (const field of ['sl', 'tp'] as const) {
      if (typeof update[field] === 'number' && update[field] < 0) args.fail(`record.${field} must be 0 or positive`);
    }
    if (typeof update.comment === 'string' && update.comment.length > 31)
      args.fail('record.comment must be at most 31 characters');
    // Profit, taxes and the agent's commission of an open trade are the server's own figures.
    const { order: _o, profit: _p, taxes: _t, commissionAgent: _c, ...fields } = update;
    for (const [field, value] of Object.entries(fields))
      if (value === undefined || value === null) delete fields[field];
    return world.tradeToWire(world.engine.adminModify(order, fields));
  });

  registry.on('AdmTradesRequest', (args, _ctx, raw) => {
    const name = args.string('group', { max: 16 });
    if (!world.groups.find(name)) notFound(`group ${name}`);
    const openOnly = optionalBool(args, raw, 'openOnly') ?? true;
    const members = new Set(
      world.users
        .values()
        .filter((u) => u.group === name)
        .map((u) => u.login),
    );
    // Open trades in ticket order, then (openOnly false) the members' closed trades oldest first.
    const open = world.trades
      .values()
      .filter((row) => members.has(row.login))
      .map((row) => world.tradeToWire(row));
    if (openOnly) return open;
    const closed = [...members]
      .flatMap((login) => world.engine.history(login))
      .filter((r) => r.tradeCommand !== 'Balance' && r.tradeCommand !== 'Credit')
      .sort(
        (a, b) => Date.parse(a.closeTime ?? a.openTime) - Date.parse(b.closeTime ?? b.openTime) || a.order - b.order,
      );
    return [...open, ...closed];
  });

  registry.on('AdmTradesDelete', (args) => {
    const orders = args.keyList('orders', INT32_MAX);
    if (orders.length === 0) args.fail('orders must not be empty');
    // Every ticket is checked before any is deleted, so a bad list deletes nothing.
    for (const order of orders) if (!world.trades.has(order)) notFound(`order ${order}`);
    for (const order of orders) world.engine.delete(order);
    return true;
  });
}

function parseTransaction(raw: Record<string, unknown>): Record<string, unknown> {
  return parseRecord(PF4TradeTransaction, raw, 'args');
}

function openRequest(args: ArgReader, tx: Record<string, unknown>, reason: OpenRequest['reason']): OpenRequest {
  const command = tx.tradeCommand as PF4Command;
  if (!COMMANDS.includes(command)) args.fail(`tradeCommand must be one of ${COMMANDS.join(', ')}`);
  const symbol = args.string('symbol', { max: 12 });
  if (typeof tx.volume !== 'number') args.fail('volume must be an integer (1/100 lot)');
  return {
    login: args.int('orderBy', { min: 1, max: INT32_MAX }),
    symbol,
    command,
    volume: tx.volume,
    price: tx.price as number | undefined,
    sl: (tx.sl as number | undefined) ?? 0,
    tp: (tx.tp as number | undefined) ?? 0,
    expiration: typeof tx.expiration === 'string' ? Date.parse(tx.expiration) : undefined,
    ieDeviation: tx.ieDeviation as number | undefined,
    comment: (tx.comment as string | undefined) ?? '',
    reason,
  };
}

/** Dispatches one PF4TradeTransaction by its type; answers the trade record it produced or changed. */
function transaction(world: Pf4World, args: ArgReader, raw: Record<string, unknown>): unknown {
  const tx = parseTransaction(raw);
  const type = args.string('tradeTransactionType');
  const reason = type.startsWith('Br') ? 'Dealer' : 'Client';
  if (typeof tx.comment === 'string' && tx.comment.length > 31) args.fail('comment must be at most 31 characters');
  const order = () => args.int('order', { min: 1, max: INT32_MAX });
  if (OPEN.has(type)) return world.tradeToWire(world.engine.open(openRequest(args, tx, reason)));
  if (CLOSE.has(type)) {
    return world.engine.close(order(), {
      volume: (tx.volume as number | undefined) || undefined,
      price: tx.price as number | undefined,
      ieDeviation: tx.ieDeviation as number | undefined,
    });
  }
  if (MODIFY.has(type)) {
    return world.tradeToWire(
      world.engine.modify(order(), {
        price: tx.price as number | undefined,
        sl: tx.sl as number | undefined,
        tp: tx.tp as number | undefined,
        expiration: typeof tx.expiration === 'string' ? Date.parse(tx.expiration) : undefined,
      }),
    );
  }
  if (DELETE.has(type)) return world.engine.delete(order());
  if (ACTIVATE.has(type)) return world.tradeToWire(world.engine.activate(order()));
  if (BALANCE.has(type)) {
    const command = tx.tradeCommand;
    if (command !== 'Balance' && command !== 'Credit')
      args.fail('tradeCommand must be Balance or Credit for BrBalance');
    if (typeof tx.price !== 'number') args.fail('price (the amount) must be a number');
    return world.engine.balance(
      args.int('orderBy', { min: 1, max: INT32_MAX }),
      command,
      tx.price,
      (tx.comment as string | undefined) ?? '',
    );
  }
  throw new CommandError(bad, `tradeTransactionType must be one of ${TRANSACTION_TYPES.join(', ')}`);
}
