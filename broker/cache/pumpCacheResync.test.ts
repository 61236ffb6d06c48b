/**
 * Change events that arrive while a resync streams: they belong to the snapshot being built, so the live tables stay
 * exactly the old snapshot until `end`, and the new snapshot carries the changes made during its transfer.
 */
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { PumpCache } from './pumpCache.js';

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const chunk = (kind: string, items: unknown[]) => resync('chunk', { kind, items });
const change = (event: string, op: 'add' | 'update' | 'delete', record: unknown) => ({ event, op, record }) as ManagerEvent;
const user = (login: number, name = `u${login}`) => ({ login, name, group: 'demo' });
const trade = (order: number, extra: Record<string, unknown> = {}) => ({ order, login: 1, symbol: 'EURUSD', ...extra });
const names = (cache: PumpCache) => cache.table('users')!.page(undefined, undefined).items.map((r) => [r.login, r.name]);
const orders = (cache: PumpCache) => cache.table('trades')!.page(undefined, undefined).items.map((r) => r.order);

function pf4(): PumpCache {
  const cache = new PumpCache('PF4');
  cache.apply(resync('begin'));
  cache.apply(chunk('users', [user(1), user(2), user(3)]));
  cache.apply(chunk('trades', [trade(10), trade(20)]));
  cache.apply(chunk('ticks', [{ symbol: 'EURUSD', time: '2026-01-01T00:00:00Z', bid: 1.1, ask: 1.1002 }]));
  cache.apply(resync('end'));
  return cache;
}

describe('change events during a resync', () => {
  it('leave the live tables alone until the snapshot ends, then show in it', () => {
    const cache = pf4();
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1), user(2, 'snapshot name'), user(3)]));
    cache.apply(change('users', 'add', user(4, 'added meanwhile')));
    cache.apply(change('users', 'update', user(2, 'renamed meanwhile')));
    cache.apply(change('users', 'delete', { login: 3 }));
    cache.apply(chunk('trades', [trade(10), trade(20)]));
    cache.apply(change('trades', 'add', trade(30)));
    cache.apply(change('trades', 'delete', { order: 10 }));
    cache.apply(change('ticks', 'update', { symbol: 'EURUSD', time: '2026-01-01T00:00:05Z', bid: 1.2, ask: 1.2002 }));

    // Mid-resync the live tables are still exactly the old snapshot.
    expect(names(cache)).toEqual([[1, 'u1'], [2, 'u2'], [3, 'u3']]);
    expect(orders(cache)).toEqual([10, 20]);
    expect(cache.get('ticks', 'EURUSD')).toMatchObject({ bid: 1.1, ask: 1.1002 });

    cache.apply(resync('end'));
    expect(names(cache)).toEqual([[1, 'u1'], [2, 'renamed meanwhile'], [4, 'added meanwhile']]);
    expect(orders(cache)).toEqual([20, 30]);
    expect(cache.get('ticks', 'EURUSD')).toMatchObject({ bid: 1.2, ask: 1.2002 });
  });

  it('are dropped with a resync the connection cut short, leaving the old snapshot as it was', () => {
    const cache = pf4();
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1)]));
    cache.apply(change('users', 'add', user(9)));
    cache.apply(change('users', 'delete', { login: 2 }));
    cache.abortResync();
    expect(names(cache)).toEqual([[1, 'u1'], [2, 'u2'], [3, 'u3']]);
    // After the aborted resync, events apply to the live tables again.
    cache.apply(change('users', 'add', user(5)));
    expect(names(cache)).toEqual([[1, 'u1'], [2, 'u2'], [3, 'u3'], [5, 'u5']]);
  });

  it('apply to PF5 positions and orders the same way', () => {
    const cache = new PumpCache('PF5');
    const position = (ticket: number, volume = 10_000) => ({ position: ticket, login: 7, symbol: 'EURUSD', volume });
    cache.apply(resync('begin'));
    cache.apply(chunk('positions', [position(1), position(2)]));
    cache.apply(resync('end'));
    cache.apply(resync('begin'));
    cache.apply(chunk('positions', [position(1), position(2)]));
    cache.apply(change('positions', 'update', position(1, 30_000)));
    cache.apply(change('positions', 'delete', { position: 2 }));
    cache.apply(change('orders', 'add', { order: 5, login: 7, symbol: 'EURUSD' }));
    expect(cache.get('positions', 1)).toMatchObject({ volume: 10_000 });
    expect(cache.get('positions', 2)).toBeDefined();
    expect(cache.get('orders', 5)).toBeUndefined();
    cache.apply(resync('end'));
    expect(cache.get('positions', 1)).toMatchObject({ volume: 30_000 });
    expect(cache.get('positions', 2)).toBeUndefined();
    expect(cache.get('orders', 5)).toMatchObject({ order: 5, login: 7 });
  });
});
