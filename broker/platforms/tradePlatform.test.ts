/**
 * A platform's cache as its manager session feeds it: a snapshot chunk larger than a turn is applied in slices with
 * the event loop let run between them, and the feed and the streams hear of each event after the cache applied it;
 * and the read fence a failover notice sets up (against a small fake trading server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { STREAM_SLICE_ROWS } from '../cache/pumpCache.js';
import { TradePlatform } from './tradePlatform.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../../test/support/broker/fakeManagerServer.js';

async function until(probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!probe()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const platforms: TradePlatform[] = [];

/** A hot PF4 platform on `server`, started, once its session is up and through its first resync. */
async function upOn(server: FakeManagerServer, id: string): Promise<TradePlatform> {
  const platform = new TradePlatform(
    { id, family: 'PF4', server: server.url, login: FAKE_MANAGER, password: FAKE_PASSWORD },
    {},
    () => {},
  );
  platforms.push(platform);
  platform.start();
  await until(() => platform.state === 'up');
  return platform;
}
afterEach(async () => {
  for (const platform of platforms.splice(0)) await platform.close();
});

describe('TradePlatform cache', () => {
  it('applies a large chunk over several turns, telling the feed and the streams in order', async () => {
    // Never started: no manager connection, the events are given as the session would.
    const platform = new TradePlatform(
      {
        id: 'f0e1d2c3-b4a5-4968-8776-655443322110',
        family: 'PF4',
        server: 'ws://127.0.0.1:1/none',
        login: 1000,
        password: 'unused',
      },
      {},
      () => {},
    );
    platforms.push(platform);
    const heard: string[] = [];
    platform.feed.listen({
      changed: (table, key) => heard.push(`changed ${table} ${key}`),
      resynced: () => heard.push('resynced'),
      closed: () => {},
    });
    platform.events.listen((event) => heard.push(`stream ${event.topic}`));
    setImmediate(() => heard.push(`immediate, ready ${platform.cache.ready}`));
    const rows = 2 * STREAM_SLICE_ROWS + 1;
    platform.cache.apply(resync('begin'));
    platform.cache.apply(
      resync('chunk', {
        kind: 'users',
        items: Array.from({ length: rows }, (_, i) => ({ login: i + 1, group: 'demo' })),
      }),
    );
    platform.cache.apply({ event: 'users', op: 'update', record: { login: 1, group: 'real' } });
    platform.cache.apply(resync('end'));
    expect(platform.cache.ready).toBe(false);
    await platform.cache.settled();
    expect(heard).toEqual(['immediate, ready false', 'changed users 1', 'stream users', 'resynced', 'stream status']);
    expect(platform.cache.sizes().users).toBe(rows);
    expect(platform.cache.get('users', 1)).toMatchObject({ login: 1, group: 'real' });
  });
});

describe('TradePlatform read fence', () => {
  it('stands after a failover notice until a ping sent then is answered and every event before it is applied', async () => {
    const server = await FakeManagerServer.start('PF4', { users: 3, trades: 0 });
    try {
      const platform = await upOn(server, 'a0e1d2c3-b4a5-4968-8776-655443322111');
      expect(platform.readFence).toBeUndefined();
      // A change the server made before the fence's ping; the ping's answer is held back a while.
      server.delays.set('Ping', 150);
      const pingsBefore = server.count('Ping');
      server.emit('users', 'update', { login: 100001, group: 'demo', name: 'Changed', balance: 5 });
      platform.fenceReads();
      const fence = platform.readFence!;
      let stood = true;
      void fence.then(() => {
        stood = false;
      });
      // The fence's ping has reached the server, which holds its answer: the fence still stands.
      await until(() => server.count('Ping') === pingsBefore + 1);
      expect(stood).toBe(true);
      await fence;
      expect(server.count('Ping')).toBe(pingsBefore + 1);
      expect(platform.cache.get('users', 100001)).toMatchObject({ name: 'Changed', balance: 5 });
      expect(platform.readFence).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('stands while the session is down, until it is up and through a resync', async () => {
    const server = await FakeManagerServer.start('PF4', { users: 2, trades: 0 });
    try {
      const platform = await upOn(server, 'b0e1d2c3-b4a5-4968-8776-655443322112');
      server.resyncDelayMs = 200;
      server.drop();
      await until(() => platform.state === 'down');
      server.users.set(100001, { login: 100001, group: 'demo', name: 'While away', balance: 9 });
      platform.fenceReads();
      await platform.readFence;
      expect(platform.state).toBe('up');
      expect(platform.cache.get('users', 100001)).toMatchObject({ name: 'While away' });
    } finally {
      await server.close();
    }
  });
});

describe('TradePlatform read fence, the server away', () => {
  it('does not fall while logins are refused: it waits for the session and pings again', async () => {
    const server = await FakeManagerServer.start('PF4', { users: 2, trades: 0 });
    try {
      const platform = await upOn(server, 'c0e1d2c3-b4a5-4968-8776-655443322113');
      server.refuseLogin = true;
      server.drop();
      await until(() => platform.state === 'down');
      const loginsBefore = server.count('login');
      platform.fenceReads();
      const fence = platform.readFence!;
      let fell = false;
      void fence.then(() => {
        fell = true;
      });
      // Two more logins refused while the fence waits: it stands through them.
      await until(() => server.count('login') >= loginsBefore + 2);
      expect(fell).toBe(false);
      server.users.set(100001, { login: 100001, group: 'demo', name: 'Back', balance: 1 });
      server.refuseLogin = false;
      await fence;
      expect(platform.state).toBe('up');
      expect(platform.cache.get('users', 100001)).toMatchObject({ name: 'Back' });
    } finally {
      await server.close();
    }
  });

  it('sets no fence on a cold standby asleep: its first use logs in and resyncs', () => {
    const platform = new TradePlatform(
      {
        id: 'd0e1d2c3-b4a5-4968-8776-655443322114',
        family: 'PF4',
        server: 'ws://127.0.0.1:1/none',
        login: 1000,
        password: 'unused',
        standby: 'cold',
      },
      {},
      () => {},
    );
    platforms.push(platform);
    platform.fenceReads();
    expect(platform.readFence).toBeUndefined();
    expect(platform.session.connectAttempts).toBe(0);
  });
});
