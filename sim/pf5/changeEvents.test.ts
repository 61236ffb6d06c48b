/**
 * Every change of what a broker caches (users, positions, orders, deals, ticks, symbols, groups) is announced: a
 * mirror that starts from a snapshot and applies only the recorded change events stays equal to a fresh snapshot
 * after each command and tick, through account changes, dealing on hedging and netting accounts, pending fills,
 * expiry, stops, stop-out, swaps, deal updates, batch deletes and configuration patches. Failed commands announce
 * nothing. Position profit and current prices follow the quote and are left out, as a broker recomputes them.
 * Margin-call events are notifications, not records, and are left out here.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../test/support/sim/worldHarness.js';
import { pf5Harness } from '../../test/support/sim/worldHarness.js';
import type { Pf5World } from './pf5World.js';

/** The kinds a PF5 server announces. */
type Kind = 'users' | 'positions' | 'orders' | 'deals' | 'ticks' | 'symbols' | 'groups';
const KEY: Record<Kind, string> = {
  users: 'login',
  positions: 'position',
  orders: 'order',
  deals: 'deal',
  ticks: 'symbol',
  symbols: 'symbol',
  groups: 'group',
};
type Mirror = Record<Kind, Map<unknown, unknown>>;

/** A record as a cache keeps it: without the figures that follow the quote. */
function cached(kind: Kind, record: Record<string, unknown>): unknown {
  if (kind !== 'positions' && kind !== 'orders') return record;
  const { profit: _profit, priceCurrent: _price, ...rest } = record;
  return rest;
}

function snapshot(world: Pf5World): Mirror {
  const out = {} as Mirror;
  for (const part of world.snapshot()) {
    const kind = part.kind as Kind;
    const toWire = part.toWire as (row: unknown) => Record<string, unknown>;
    out[kind] = new Map(
      part.rows.map((row) => {
        const record = toWire(row);
        return [record[KEY[kind]], cached(kind, record)];
      }),
    );
  }
  return out;
}

function apply(mirror: Mirror, events: RecordedEvent[]): void {
  for (const event of events) {
    const { op, record } = event;
    const kind = event.kind as Kind;
    const key = record[KEY[kind]];
    const table = mirror[kind];
    if (op === 'add') expect(table.has(key), `${kind} add of existing ${String(key)}`).toBe(false);
    else expect(table.has(key), `${kind} ${op} of unknown ${String(key)}`).toBe(true);
    if (op === 'delete') {
      expect(Object.keys(record), `${kind} delete carries the key only`).toEqual([KEY[kind]]);
      table.delete(key);
    } else {
      table.set(key, cached(kind, record));
    }
  }
}

describe('change events', () => {
  it('keep a mirror built from one snapshot equal to the world through every kind of change', () => {
    const h = pf5Harness({ accounts: 30, trades: 60, orders: 12 });
    const { world } = h;
    world.feed.inject('EURUSD', 1.1, 1.1001);
    world.feed.inject('XAUUSD', 2000, 2000.5);
    const mirror = snapshot(world);
    h.events.length = 0;

    /** Runs one change and checks which kinds it announced and that the mirror still matches the world. */
    // Margin-call events announce a level crossed, not a record a broker keeps (marginCalls.test.ts covers them).
    const step = <T>(name: string, kinds: Kind[], change: () => T): T => {
      const result = change();
      const changes = h.events.splice(0).filter((e) => e.kind !== 'margin');
      const announced = [...new Set(changes.map((e) => e.kind))].sort();
      expect(announced, name).toEqual([...kinds].sort());
      apply(mirror, changes);
      expect(mirror, name).toEqual(snapshot(world));
      return result;
    };
    const tick =
      (symbol: string, bid: number, ask: number, time = Date.now()) =>
      () =>
        world.feed.inject(symbol, bid, ask, time);

    // Accounts.
    const add = (group: string, firstName: string) =>
      step(
        `UserAdd ${group}`,
        ['users'],
        () => h.call('UserAdd', { record: { group, leverage: 100, firstName } }).login as number,
      );
    const hedged = add('demo\\retail', 'Hedda');
    const netted = add('demo\\netting', 'Nora');
    const charged = add('real\\retail', 'Rolf');
    step('UserUpdate', ['users'], () => h.call('UserUpdate', { record: { login: hedged, city: 'Oslo' } }));
    step('UserRecord', ['users'], () => h.call('UserRecord', { login: hedged, patch: { comment: 'vip' } }));
    step('UserPasswordChange', ['users'], () => h.call('UserPasswordChange', { login: hedged, password: 'Fresh123x' }));
    for (const login of [hedged, netted, charged]) {
      step('DealerBalance', ['deals', 'users'], () =>
        h.call('DealerBalance', { login, type: 'Balance', amount: 20_000 }),
      );
    }
    step('DealerBalance credit', ['deals', 'users'], () =>
      h.call('DealerBalance', { login: hedged, type: 'Credit', amount: 300 }),
    );

    // Dealing on a hedging account: a fill without commission changes no account record.
    const send = (login: number, fields: Record<string, unknown>) =>
      h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, ...fields });
    const first = step('open hedged', ['positions', 'deals'], () => send(hedged, { priceSL: 1.095 }));
    const second = step('open hedged again', ['positions', 'deals'], () => send(hedged, {}));
    step('close hedged', ['positions', 'deals', 'users'], () =>
      send(hedged, { type: 'Sell', position: second.position }),
    );
    step('open with commission', ['positions', 'deals', 'users'], () => send(charged, {}));

    // Netting: grow, reduce, reverse.
    step('net open', ['positions', 'deals'], () => send(netted, {}));
    step('net grow', ['positions', 'deals'], () => send(netted, {}));
    step('net reduce', ['positions', 'deals', 'users'], () => send(netted, { type: 'Sell', volume: 5_000 }));
    step('net reverse', ['positions', 'deals', 'users'], () => send(netted, { type: 'Sell', volume: 30_000 }));

    // Pending orders: placed, canceled, filled by the market, expired.
    const limit = step('place', ['orders'], () => send(hedged, { type: 'BuyLimit', price: 1.09 }));
    step('cancel', ['orders'], () => h.call('DealerCancel', { order: limit.order }));
    step('place again', ['orders'], () => send(hedged, { type: 'BuyLimit', price: 1.098 }));
    const expiring = step('place expiring', ['orders'], () =>
      h.call('DealerSend', {
        login: hedged,
        symbol: 'XAUUSD',
        type: 'SellLimit',
        volume: 100,
        price: 2100,
        expiration: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
    step('fill by the market', ['ticks', 'orders', 'positions', 'deals'], tick('EURUSD', 1.0979, 1.098));
    step('expire', ['ticks', 'orders'], tick('XAUUSD', 2001, 2001.5, Date.now() + 120_000));
    expect(h.call('HistoryRequestByTickets', { tickets: [expiring.order] })[0].state).toBe('Expired');

    // Stop-loss close, then a stop-out on the netting account.
    step('stop loss', ['ticks', 'positions', 'deals', 'users'], tick('EURUSD', 1.0949, 1.095));
    expect(h.call('PositionGetByTickets', { tickets: [first.position] })).toEqual([]);
    step('leverage cut', ['users'], () => h.call('UserUpdate', { record: { login: netted, leverage: 1 } }));
    step('stop out', ['ticks', 'positions', 'deals', 'users'], tick('EURUSD', 1.0948, 1.0949));
    expect(h.call('PositionGetByLogins', { logins: [netted] })).toEqual([]);

    // Swaps, deal updates, deletes.
    step('rollover', ['positions'], () => world.rollover(Date.UTC(2026, 5, 2)));
    const someDeal = world.deals.values()[3].deal;
    step('DealUpdate', ['deals'], () => h.call('DealUpdate', { record: { deal: someDeal, comment: 'audited' } }));
    const own = <V>(rows: V[], key: (v: V) => number) =>
      rows
        .map(key)
        .filter((t) => !world.foreignTickets.has(t))
        .slice(0, 2);
    step('PositionDeleteBatch', ['positions'], () =>
      h.call('PositionDeleteBatch', { tickets: own(world.positions.values(), (p) => p.position) }),
    );
    step('OrderDeleteBatch', ['orders'], () =>
      h.call('OrderDeleteBatch', { tickets: own(world.orders.values(), (o) => o.order) }),
    );
    step('DealDeleteBatch', ['deals'], () =>
      h.call('DealDeleteBatch', { tickets: own(world.deals.values(), (x) => x.deal) }),
    );

    // Configuration.
    step('GroupRecord', ['groups'], () => h.call('GroupRecord', { group: 'real\\pro', patch: { marginCall: 90 } }));
    step('SymbolUpdate', ['symbols'], () => h.call('SymbolUpdate', { symbol: 'EURUSD', record: { stopsLevel: 20 } }));
    step('SymbolRecord', ['symbols'], () =>
      h.call('SymbolRecord', { symbol: 'XAUUSD', patch: { description: 'Gold' } }),
    );

    // Refused commands announce nothing and change nothing.
    step('refused', [], () => {
      h.fails('DealerSend', { login: charged, symbol: 'EURUSD', type: 'Buy', volume: 1_000_000 });
      h.fails('DealerCancel', { order: limit.order });
      h.fails('UserPasswordChange', { login: hedged, password: 'weak' });
      h.fails('DealUpdate', { record: { deal: someDeal, colour: 1 } });
      h.fails('GroupRecord', { group: 'real\\pro', patch: { commissions: {} } });
      h.fails('PositionDeleteBatch', { tickets: [1] });
    });
  });
});
