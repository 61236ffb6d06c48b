/**
 * Change events that arrive while a resync streams: they belong to the snapshot being built, so the live tables stay
 * exactly the old snapshot until `end`, and the new snapshot carries the changes made during its transfer. A chunk
 * larger than a turn (`sliceRows`) is applied in slices with the event loop let run between them, in the same order.
 */
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { PumpCache } from './pumpCache.js';

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const chunk = (kind: string, items: unknown[]) => resync('chunk', { kind, items });
const change = (event: string, op: 'add' | 'update' | 'delete', record: unknown) =>
  ({ event, op, record }) as ManagerEvent;
const user = (login: number, name = `u${login}`) => ({ login, name, group: 'demo' });
const trade = (order: number, extra: Record<string, unknown> = {}) => ({ order, login: 1, symbol: 'EURUSD', ...extra });
const names = (cache: PumpCache) =>
  cache
    .table('users')!
    .page(undefined, undefined)
    .items.map((r) => [r.login, r.name]);
const orders = (cache: PumpCache) =>
  cache
    .table('trades')!
    .page(undefined, undefined)
    .items.map((r) => r.order);

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
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [3, 'u3'],
    ]);
    expect(orders(cache)).toEqual([10, 20]);
    expect(cache.get('ticks', 'EURUSD')).toMatchObject({ bid: 1.1, ask: 1.1002 });

    cache.apply(resync('end'));
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'renamed meanwhile'],
      [4, 'added meanwhile'],
    ]);
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
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [3, 'u3'],
    ]);
    // After the aborted resync, events apply to the live tables again.
    cache.apply(change('users', 'add', user(5)));
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [3, 'u3'],
      [5, 'u5'],
    ]);
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

describe('a snapshot chunk larger than a turn (sliceRows)', () => {
  const many = (count: number, from = 1) => Array.from({ length: count }, (_, i) => user(from + i));
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('lets the event loop run between its slices, and applies the events given meanwhile after it, in order', async () => {
    const told: string[] = [];
    const cache = new PumpCache('PF4', {
      sliceRows: 100,
      onApplied: (e) => told.push(e.op === 'chunk' ? 'chunk' : `${e.event} ${e.op}`),
    });
    const turns: string[] = [];
    // Scheduled before the chunk is given: it runs before the chunk is through.
    setImmediate(() => turns.push(`immediate, ${told.length} told, ready ${cache.ready}`));
    const ready = cache.whenReady().then(() => turns.push('ready'));
    const given: ManagerEvent[] = [
      resync('begin'),
      chunk('users', many(1000)),
      change('users', 'update', user(999, 'renamed meanwhile')),
      change('users', 'delete', { login: 500 }),
      change('users', 'add', user(5000)),
      chunk('trades', [trade(10)]),
      resync('end'),
    ];
    for (const event of given) cache.apply(event);
    await ready;

    expect(turns).toEqual(['immediate, 1 told, ready false', 'ready']);
    expect(told).toEqual(['resync begin', 'chunk', 'users update', 'users delete', 'users add', 'chunk', 'resync end']);
    // The end state is the one the events make in the order given.
    expect(cache.sizes()).toMatchObject({ users: 1000, trades: 1 });
    expect(cache.get('users', 999)).toMatchObject({ name: 'renamed meanwhile' });
    expect(cache.get('users', 500)).toBeUndefined();
    expect(cache.get('users', 5000)).toMatchObject(user(5000));
    expect(names(cache).slice(0, 3)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [3, 'u3'],
    ]);
    expect(names(cache).at(-1)).toEqual([5000, 'u5000']);
  });

  it('serves the whole old snapshot between slices, and events after the end wait their turn behind it', async () => {
    const cache = new PumpCache('PF4', { sliceRows: 100 });
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1), user(2), user(3)]));
    cache.apply(resync('end'));
    cache.apply(resync('begin'));
    cache.apply(chunk('users', many(450, 10)));
    cache.apply(resync('end'));
    cache.apply(change('users', 'update', user(10, 'after the end')));
    await nextTurn();
    // Mid-chunk: still exactly the old snapshot; the change after the end is not applied to it either.
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [3, 'u3'],
    ]);
    expect(cache.resyncs).toBe(1);
    await cache.settled();
    expect(cache.resyncs).toBe(2);
    expect(cache.sizes().users).toBe(450);
    expect(cache.get('users', 1)).toBeUndefined();
    expect(cache.get('users', 10)).toMatchObject({ name: 'after the end' });
  });

  it('aborts a resync cut short after the rows given before the drop, then applies later events to the old snapshot', async () => {
    const cache = new PumpCache('PF4', { sliceRows: 100 });
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1), user(2)]));
    cache.apply(resync('end'));
    const order: string[] = [];
    cache.apply(resync('begin'));
    cache.apply(chunk('users', many(300, 100)));
    cache.abortResync(() => order.push(`aborted, resyncs ${cache.resyncs}`));
    cache.apply(change('users', 'add', user(7)));
    cache.apply(resync('end')); // a stray end without its begin changes nothing
    expect(order).toEqual([]);
    await cache.settled();
    expect(order).toEqual(['aborted, resyncs 1']);
    expect(names(cache)).toEqual([
      [1, 'u1'],
      [2, 'u2'],
      [7, 'u7'],
    ]);
    expect(cache.resyncs).toBe(1);
  });

  it('drops the events still waiting when the cache is reset', async () => {
    const cache = new PumpCache('PF4', { sliceRows: 100 });
    cache.apply(resync('begin'));
    cache.apply(chunk('users', many(300)));
    cache.apply(resync('end'));
    cache.reset();
    await cache.settled();
    await nextTurn();
    expect(cache.ready).toBe(false);
    expect(cache.sizes().users).toBe(0);
    expect(cache.resyncs).toBe(0);
  });

  it('applies each event whole at once without sliceRows', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(chunk('users', many(5000)));
    cache.apply(resync('end'));
    expect(cache.ready).toBe(true);
    expect(cache.sizes().users).toBe(5000);
    expect(() => new PumpCache('PF4', { sliceRows: 0 })).toThrow('sliceRows must be at least 1');
  });
});
