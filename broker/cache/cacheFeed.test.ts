/**
 * The cache feed: which rows each manager event may have touched (its own table and the ones the cache derives from
 * it), a completed resync as one "everything changed", and the platform's end.
 */
import { describe, expect, it } from 'vitest';
import type { Family, ManagerEvent } from '../../shared/protocol.js';
import { CacheFeed, type CacheListener } from './cacheFeed.js';

class Recorder implements CacheListener {
  readonly seen: string[] = [];
  changed(table: string, key: string | number | bigint): void {
    this.seen.push(`${table}:${String(key)}`);
  }
  resynced(): void {
    this.seen.push('resynced');
  }
  closed(): void {
    this.seen.push('closed');
  }
}

const event = (kind: string, record: unknown, op: ManagerEvent['op'] = 'update'): ManagerEvent =>
  ({ event: kind, op, record }) as ManagerEvent;

function fed(family: Family, ...events: ManagerEvent[]): string[] {
  const feed = new CacheFeed(family);
  const r = new Recorder();
  feed.listen(r);
  for (const e of events) feed.afterEvent(e);
  return r.seen;
}

describe('the cache feed', () => {
  it("names the event's own row and the rows the cache derives from it", () => {
    expect(fed('PF4', event('users', { login: 7 }))).toStrictEqual(['users:7']);
    expect(fed('PF4', event('trades', { order: 11, login: 7 }, 'delete'))).toStrictEqual([
      'trades:11',
      'closedTrades:11',
    ]);
    expect(fed('PF4', event('groups', { group: 'demo' }))).toStrictEqual(['groups:demo', 'groupSecurities:demo']);
    expect(fed('PF4', event('ticks', { symbol: 'EURUSD', bid: 1 }))).toStrictEqual([
      'ticks:EURUSD',
      'symbolInfo:EURUSD',
    ]);
    expect(fed('PF4', event('symbols', { symbol: 'GBPUSD' }, 'add'))).toStrictEqual([
      'symbols:GBPUSD',
      'symbolInfo:GBPUSD',
    ]);
    expect(fed('PF4', event('margin', { login: 9 }))).toStrictEqual(['margins:9']);
    expect(fed('PF4', event('newsBodies', { key: 3, body: 'x' }))).toStrictEqual(['newsBodies:3']);
  });

  it("names only the tables the platform's family keeps", () => {
    expect(fed('PF5', event('positions', { position: 5, login: 1 }))).toStrictEqual(['positions:5']);
    // PF5 has neither trades nor symbol summaries nor margins.
    expect(
      fed('PF5', event('trades', { order: 1 }), event('ticks', { symbol: 'X' }), event('margin', { login: 1 })),
    ).toStrictEqual(['ticks:X']);
    expect(fed('PF4', event('mail', { id: 1 }), event('deals', { deal: 1 }))).toStrictEqual([]);
  });

  it('skips records without a usable key, and events without a record', () => {
    expect(
      fed(
        'PF4',
        event('users', { name: 'no login' }),
        event('users', { login: { nested: 1 } }),
        event('users', null),
        event('users', 'text'),
        event('ticks', { symbol: 5 }),
      ),
    ).toStrictEqual(['ticks:5', 'symbolInfo:5']);
  });

  it('tells a completed resync once, not its begin nor its chunks', () => {
    expect(
      fed(
        'PF4',
        event('resync', {}, 'begin'),
        event('resync', { kind: 'users', items: [{ login: 1 }] }, 'chunk'),
        event('resync', {}, 'end'),
      ),
    ).toStrictEqual(['resynced']);
  });

  it('tells every listener until it stops listening, and ends them all once on close', () => {
    const feed = new CacheFeed('PF4');
    const a = new Recorder();
    const b = new Recorder();
    const stopA = feed.listen(a);
    feed.listen(b);
    expect(feed.listenerCount).toBe(2);
    feed.afterEvent(event('users', { login: 1 }));
    stopA();
    expect(feed.listenerCount).toBe(1);
    feed.afterEvent(event('users', { login: 2 }));
    feed.close();
    expect(feed.listenerCount).toBe(0);
    feed.close();
    feed.afterEvent(event('users', { login: 3 }));
    expect(a.seen).toStrictEqual(['users:1']);
    expect(b.seen).toStrictEqual(['users:1', 'users:2', 'closed']);
  });

  it('does not look into an event while nobody listens', () => {
    const feed = new CacheFeed('PF4');
    let reads = 0;
    const e = {
      event: 'users',
      op: 'update',
      get record() {
        reads++;
        return { login: 4 };
      },
    } as ManagerEvent;
    feed.afterEvent(e);
    expect(reads).toBe(0);
    const r = new Recorder();
    const stop = feed.listen(r);
    feed.afterEvent(e);
    expect(reads).toBe(1);
    stop();
    feed.afterEvent(e);
    expect(reads).toBe(1);
    expect(r.seen).toStrictEqual(['users:4']);
  });

  it('reads keys from object records only, not from a function or a primitive that carries the field', () => {
    expect(
      fed(
        'PF4',
        event(
          'users',
          Object.assign(() => undefined, { login: 8 }),
        ),
        event('users', 8),
        event('users', true),
        event('ticks', 'EURUSD'),
        event('users', { login: 9 }),
      ),
    ).toStrictEqual(['users:9']);
  });
});

describe("the cache feed's position", () => {
  const event = (e: string, op: string, record: unknown = {}) => ({ event: e, op, record }) as ManagerEvent;

  it('has none before the first snapshot, then counts every change event since the last snapshot, listened to or not', () => {
    const feed = new CacheFeed('PF4');
    expect(feed.position()).toBeUndefined();
    feed.afterEvent(event('users', 'update', { login: 1 }));
    expect(feed.position()).toBeUndefined();
    feed.afterEvent(event('resync', 'begin'));
    feed.afterEvent(event('resync', 'chunk'));
    feed.afterEvent(event('resync', 'end'));
    const first = feed.position()!;
    expect(first.count).toBe(0);
    expect(first.epoch).toBeGreaterThan(0);
    feed.afterEvent(event('users', 'update', { login: 1 }));
    feed.afterEvent(event('trades', 'add', { order: 5 }));
    feed.afterEvent(event('ticks', 'update', null));
    expect(feed.position()).toEqual({ epoch: first.epoch, count: 3 });
    // A resync's events before its end leave the answering tables' position alone; its end starts a later epoch.
    feed.afterEvent(event('resync', 'begin'));
    feed.afterEvent(event('resync', 'end'));
    const second = feed.position()!;
    expect(second.count).toBe(0);
    expect(second.epoch).toBeGreaterThan(first.epoch);
  });
});
