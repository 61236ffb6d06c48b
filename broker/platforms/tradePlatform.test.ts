/**
 * A platform's cache as its manager session feeds it: a snapshot chunk larger than a turn is applied in slices with
 * the event loop let run between them, and the feed and the streams hear of each event after the cache applied it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { STREAM_SLICE_ROWS } from '../cache/pumpCache.js';
import { TradePlatform } from './tradePlatform.js';

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const platforms: TradePlatform[] = [];
afterEach(async () => {
  for (const platform of platforms.splice(0)) await platform.close();
});

describe('TradePlatform cache', () => {
  it('applies a large chunk over several turns, telling the feed and the streams in order', async () => {
    // Never started: no manager connection, the events are given as the session would.
    const platform = new TradePlatform(
      { id: 'f0e1d2c3-b4a5-4968-8776-655443322110', family: 'PF4', server: 'ws://127.0.0.1:1/none', login: 1000, password: 'unused' },
      {}, () => {},
    );
    platforms.push(platform);
    const heard: string[] = [];
    platform.feed.listen({ changed: (table, key) => heard.push(`changed ${table} ${key}`), resynced: () => heard.push('resynced'), closed: () => {} });
    platform.events.listen((event) => heard.push(`stream ${event.topic}`));
    setImmediate(() => heard.push(`immediate, ready ${platform.cache.ready}`));
    const rows = 2 * STREAM_SLICE_ROWS + 1;
    platform.cache.apply(resync('begin'));
    platform.cache.apply(resync('chunk', { kind: 'users', items: Array.from({ length: rows }, (_, i) => ({ login: i + 1, group: 'demo' })) }));
    platform.cache.apply({ event: 'users', op: 'update', record: { login: 1, group: 'real' } });
    platform.cache.apply(resync('end'));
    expect(platform.cache.ready).toBe(false);
    await platform.cache.settled();
    expect(heard).toEqual(['immediate, ready false', 'changed users 1', 'stream users', 'resynced', 'stream status']);
    expect(platform.cache.sizes().users).toBe(rows);
    expect(platform.cache.get('users', 1)).toMatchObject({ login: 1, group: 'real' });
  });
});
