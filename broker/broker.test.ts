/**
 * The broker in-process against a fake trading server: edge link auth and multiplexing, cached and live reads, change
 * events, not-found mapping, deadlines, reconnect with resync, /healthz and the platform file.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ResultFrame } from '../shared/frames.js';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startBroker, type RunningBroker } from './index.js';
import type { PlatformConfig } from './session/managerSession.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../test/support/broker/fakeManagerServer.js';
import { eventually, failed, ok, TestLink } from '../test/support/broker/linkClient.js';
import type { LogFields } from './observability/log.js';

const SECRET = 'link-secret-for-tests';
const PF4_ID = '0b6f3a52-4a53-4c47-9d6f-5a1e2f0c0001';
const PF5_ID = '0b6f3a52-4a53-4c47-9d6f-5a1e2f0c0002';
const FAST = { backoff: { baseMs: 20, capMs: 200 }, pingIntervalMs: 1000 };

const platform = (id: string, fake: FakeManagerServer, password = FAKE_PASSWORD): PlatformConfig => ({
  id,
  family: fake.family,
  server: fake.url,
  login: FAKE_MANAGER,
  password,
});

/** Status of a bare upgrade request to /link (fetch refuses to send upgrade headers). */
const upgradeStatus = (port: number, authorization?: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/link',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...(authorization ? { authorization } : {}),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('error', reject);
    req.end();
  });
const health = async (broker: RunningBroker) => {
  const res = await fetch(`http://127.0.0.1:${broker.port}/healthz`);
  return {
    status: res.status,
    body: (await res.json()) as {
      status: string;
      platforms: Record<string, { up: boolean; lastError: string | null }>;
    },
  };
};

describe('broker with a PF4 and a PF5 platform', () => {
  let pf4: FakeManagerServer;
  let pf5: FakeManagerServer;
  let broker: RunningBroker;
  let link: TestLink;

  beforeAll(async () => {
    pf4 = await FakeManagerServer.start('PF4');
    pf5 = await FakeManagerServer.start('PF5');
    broker = await startBroker({
      secret: SECRET,
      platforms: [platform(PF4_ID, pf4), platform(PF5_ID, pf5)],
      session: FAST,
    });
    link = await TestLink.open(broker.port, SECRET);
    await eventually(async () => (await health(broker)).status === 200);
  });
  afterAll(async () => {
    await link?.close();
    await broker?.close();
    await pf4?.close();
    await pf5?.close();
  });
  afterEach(() => {
    pf4.delays.clear();
    pf4.refuseLogin = false;
  });

  describe('edge link', () => {
    it('refuses an upgrade without the right secret with 401, before any socket exists', async () => {
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${SECRET}x`, SECRET]) {
        expect(await upgradeStatus(broker.port, authorization)).toBe(401);
      }
      await expect(TestLink.open(broker.port, 'nope')).rejects.toThrow(/401/);
    });

    it('greets the edge with the broker id and version', () => {
      expect(link.hellos[0]).toMatchObject({ hello: { broker: 'local', version: expect.any(String) } });
    });

    it('multiplexes calls on one link: a slow live call does not hold up cached reads behind it', async () => {
      pf4.delays.set('ServerTime', 300);
      const slow = link.call(PF4_ID, 'ServerTime');
      const fast = Array.from({ length: 50 }, (_, i) =>
        link.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 + (i % 20) }),
      );
      const answers = await Promise.all(fast);
      expect(answers.every((a) => a.ok)).toBe(true);
      expect(new Set(answers.map((a) => a.id)).size).toBe(50);
      expect(answers.map((a) => (ok(a).data as { login: number }).login)).toEqual(
        Array.from({ length: 50 }, (_, i) => 100001 + (i % 20)),
      );
      const time = ok(await slow);
      expect(Date.parse(time.data as string)).not.toBeNaN();
      const slowId = time.id;
      expect(link.answerOrder.indexOf(slowId)).toBeGreaterThan(link.answerOrder.indexOf(answers[49].id));
    });

    it('answers an unknown platform and an unknown operation as NotFound', async () => {
      const platformMissing = failed(await link.call('00000000-0000-4000-8000-000000000000', 'ServerTime'));
      expect(platformMissing.error).toEqual({
        code: 'NotFound',
        managerCode: null,
        message: 'trade platform not served by this broker',
      });
      const opMissing = failed(await link.call(PF4_ID, 'PF4.NoSuchThing'));
      expect(opMissing.error).toEqual({
        code: 'NotFound',
        managerCode: null,
        message: 'operation PF4.NoSuchThing not served',
      });
      const wrongFamily = failed(await link.call(PF5_ID, 'PF4.UserRecordGet', { login: 500000 }));
      expect(wrongFamily.error.code).toBe('NotFound');
    });

    it('answers a malformed call frame, and closes a link that sends garbage', async () => {
      const other = await TestLink.open(broker.port, SECRET);
      try {
        const answer = new Promise<ResultFrame>((resolve) =>
          other.ws.once('message', (d) => resolve(JSON.parse((d as Buffer).toString()))),
        );
        other.ws.send(JSON.stringify({ id: 7, platform: PF4_ID, op: 42, timeoutMs: 1000 }));
        expect(await answer).toMatchObject({ id: 7, ok: false, error: { code: 'Internal' } });
        other.ws.send('not json');
        await eventually(() => other.closeCode !== null);
        expect(other.closeCode).toBe(1007);
      } finally {
        await other.close();
      }
    });
  });

  describe('cached reads', () => {
    it('answers accounts, open trades and ticks from the resynced cache without a round trip', async () => {
      const before = pf4.received.length;
      expect(ok(await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 100003 })).data).toMatchObject({
        login: 100003,
        name: 'User 100003',
      });
      expect(ok(await link.call(PF4_ID, 'PF4.TradesGetTicket', { ticket: 5004 })).data).toMatchObject({ order: 5004 });
      expect(ok(await link.call(PF4_ID, 'PF4.TickInfoLastSymbol', { symbol: 'EURUSD' })).data).toEqual({
        symbol: 'EURUSD',
        time: '2026-01-01T00:00:00.000Z',
        bid: 1.1,
        ask: 1.1002,
      });
      expect(ok(await link.call(PF5_ID, 'PF5.UserGet', { login: 500002 })).data).toMatchObject({ login: 500002 });
      expect(pf4.received.slice(before).filter((r) => r.cmd !== 'Ping')).toEqual([]);
    });

    it('pages open trades by ticket with opaque cursors', async () => {
      const orders: number[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = ok(await link.call(PF4_ID, 'PF4.TradesGet', { limit: 7, ...(cursor ? { cursor } : {}) }));
        orders.push(...(page.data as Array<{ order: number }>).map((t) => t.order));
        expect(page.paging).toBeDefined();
        if (!page.paging!.hasMore) {
          expect(page.paging!.nextCursor).toBeNull();
          break;
        }
        cursor = page.paging!.nextCursor!;
      }
      expect(orders).toEqual([...pf4.trades.keys()].sort((a, b) => a - b));
      const all = ok(await link.call(PF4_ID, 'PF4.TradesGet', {}));
      expect((all.data as unknown[]).length).toBe(pf4.trades.size);
      expect(all.paging).toEqual({ nextCursor: null, hasMore: false });
      const bad = failed(await link.call(PF4_ID, 'PF4.TradesGet', { limit: 5, cursor: 'garbage!' }));
      expect(bad.error).toEqual({
        code: 'Validation',
        managerCode: null,
        message: 'cursor is not valid for this list',
      });
    });

    it('follows change events: added, updated and closed records', async () => {
      pf4.emit('users', 'add', { login: 190000, group: 'demo', name: 'Fresh' });
      pf4.emit('users', 'update', { login: 100001, group: 'demo', name: 'Renamed' });
      pf4.emit('trades', 'delete', { order: 5000 });
      pf4.emit('ticks', 'update', { symbol: 'EURUSD', time: '2026-01-01T00:00:01.000Z', bid: 1.2, ask: 1.2002 });
      await eventually(async () => (await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 190000 })).ok);
      expect(ok(await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 })).data).toMatchObject({
        name: 'Renamed',
      });
      expect(ok(await link.call(PF4_ID, 'PF4.TickInfoLastSymbol', { symbol: 'EURUSD' })).data).toMatchObject({
        bid: 1.2,
      });
      const closed = failed(await link.call(PF4_ID, 'PF4.TradesGetTicket', { ticket: 5000 }));
      expect(closed.error).toMatchObject({ code: 'NotFound', managerCode: PF4_RESULT.InvalidData });
      const page = ok(await link.call(PF4_ID, 'PF4.TradesGet', { limit: 2 }));
      expect((page.data as Array<{ order: number }>).map((t) => t.order)).toEqual([5002, 5004]);
    });

    it('answers unknown keys as NotFound with the family not-found code', async () => {
      expect(failed(await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 2147483000 })).error).toEqual({
        code: 'NotFound',
        managerCode: PF4_RESULT.InvalidData,
        message: 'login 2147483000 not found',
      });
      expect(failed(await link.call(PF4_ID, 'PF4.TickInfoLastSymbol', { symbol: 'NOSUCH' })).error).toMatchObject({
        code: 'NotFound',
        managerCode: PF4_RESULT.InvalidData,
      });
      expect(failed(await link.call(PF5_ID, 'PF5.UserGet', { login: 999999999 })).error).toMatchObject({
        code: 'NotFound',
        managerCode: PF5_RESULT.ErrNotfound,
      });
    });
  });

  describe('live calls', () => {
    it('round-trips Ping through the manager session', async () => {
      const pings = pf5.count('Ping');
      const r = ok(await link.call(PF5_ID, 'Ping'));
      expect(r.data).toMatchObject({ ok: true, roundTripMs: expect.any(Number), serverTime: expect.any(String) });
      expect(pf5.count('Ping')).toBe(pings + 1);
    });

    it('reads an account live, and maps an empty answer to NotFound', async () => {
      expect(ok(await link.call(PF4_ID, 'PF4.UserRecordRequest', { login: 100002 })).data).toMatchObject({
        login: 100002,
      });
      expect(failed(await link.call(PF4_ID, 'PF4.UserRecordRequest', { login: 123 })).error).toMatchObject({
        code: 'NotFound',
        managerCode: PF4_RESULT.InvalidData,
      });
    });

    it('pages accounts live by login, asking the server for one extra to learn hasMore', async () => {
      const logins: number[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = ok(await link.call(PF4_ID, 'PF4.UsersRequest', { limit: 6, ...(cursor ? { cursor } : {}) }));
        logins.push(...(page.data as Array<{ login: number }>).map((u) => u.login));
        if (!page.paging!.hasMore) break;
        cursor = page.paging!.nextCursor!;
      }
      expect(logins).toEqual([...pf4.users.keys()].sort((a, b) => a - b));
      const last = pf4.received.filter((r) => r.cmd === 'UsersRequest').at(-1)!;
      expect(last.args).toMatchObject({ limit: 7, after: expect.any(Number) });
    });

    it('creates an account live and maps a platform refusal to PF4Error with the result code', async () => {
      const created = ok(
        await link.call(PF4_ID, 'PF4.UserRecordNew', { body: { login: 0, group: 'demo', name: 'New' } }),
      );
      const login = (created.data as { login: number }).login;
      expect(login).toBeGreaterThan(0);
      // The server's add event reaches the cache.
      await eventually(async () => (await link.call(PF4_ID, 'PF4.UserRecordGet', { login })).ok);
      const duplicate = failed(
        await link.call(PF4_ID, 'PF4.UserRecordNew', { body: { login, group: 'demo', name: 'Again' } }),
      );
      expect(duplicate.error).toMatchObject({ code: 'PF4Error', managerCode: PF4_RESULT.InvalidData });
      expect(duplicate.outcome).toBeUndefined();
    });

    it('answers a call past its deadline as a time-out; a mutating one has an unknown outcome', async () => {
      pf4.delays.set('ServerTime', 600);
      pf4.delays.set('UserRecordNew', 1500);
      const read = failed(await link.call(PF4_ID, 'ServerTime', {}, 150));
      expect(read).toMatchObject({
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 0.15s' },
      });
      expect(read.outcome).toBeUndefined();
      const change = failed(
        await link.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Slow' } }, 1000),
      );
      expect(change).toMatchObject({
        timedOut: true,
        outcome: 'unknown',
        error: { code: 'NoConnect', message: 'the trading server did not answer within 1s' },
      });
    });

    it('restarts the server with SrvRestart; the session reconnects and resyncs', async () => {
      const logins = pf4.logins;
      expect(ok(await link.call(PF4_ID, 'PF4.SrvRestart', { confirm: true })).data).toBe(true);
      await eventually(() => pf4.logins > logins);
      expect(ok(await link.call(PF4_ID, 'ServerTime')).ok).toBe(true);
    });
  });

  describe('connection loss', () => {
    it('reconnects after a drop with a full resync that replaces the cache', async () => {
      const logins = pf4.logins;
      pf4.users.set(170000, { login: 170000, group: 'demo', name: 'Seen only by resync' });
      pf4.users.delete(100020);
      pf4.drop();
      await eventually(() => pf4.logins > logins);
      await eventually(async () => (await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 170000 })).ok);
      expect(failed(await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 100020 })).error.code).toBe('NotFound');
      await eventually(async () => (await health(broker)).status === 200);
    });

    it('fails calls in flight when the connection drops', async () => {
      pf4.delays.set('UserRecordNew', 2000);
      pf4.delays.set('ServerTime', 2000);
      const change = link.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Lost' } }, 5000);
      const read = link.call(PF4_ID, 'ServerTime', {}, 5000);
      await eventually(() => pf4.count('UserRecordNew') > 0 && pf4.received.at(-1)!.cmd === 'ServerTime');
      pf4.drop();
      const [c, r] = [failed(await change), failed(await read)];
      expect(c.error).toMatchObject({ code: 'NoConnect', managerCode: null });
      expect(c.outcome).toBe('unknown');
      expect(c.timedOut).toBeUndefined();
      expect(r.error.code).toBe('NoConnect');
      expect(r.outcome).toBeUndefined();
      pf4.delays.clear();
      await eventually(async () => (await health(broker)).status === 200);
    });

    it('reports a platform down in /healthz while logins are refused, and up again after', async () => {
      pf4.refuseLogin = true;
      pf4.drop();
      const down = await eventually(async () => {
        const h = await health(broker);
        return h.status === 503 && /logins refused/.test(h.body.platforms[PF4_ID].lastError ?? '') ? h : null;
      });
      expect(down.body.status).toBe('degraded');
      expect(down.body.platforms[PF4_ID].lastError).toMatch(/logins refused/);
      expect(down.body.platforms[PF5_ID].up).toBe(true);
      expect(JSON.stringify(down.body)).not.toContain(FAKE_PASSWORD);
      // A live call while logins are refused fails fast with the login's result code.
      const refused = failed(await link.call(PF4_ID, 'ServerTime', {}, 2000));
      expect(refused.error).toMatchObject({ code: 'NoConnect', managerCode: PF4_RESULT.NoConnect });
      pf4.refuseLogin = false;
      const up = await eventually(async () => {
        const h = await health(broker);
        return h.status === 200 ? h : null;
      });
      expect(up.body).toMatchObject({ status: 'ok', platforms: { [PF4_ID]: { up: true, lastError: null } } });
    });
  });

  it('exposes sessions, calls, latency and cache sizes in /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    expect(text).toContain(`broker_session_up{platform="${PF4_ID}",family="PF4"} 1`);
    expect(text).toMatch(/broker_requests_total\{op="PF4.UserRecordGet",outcome="ok"\} \d+/);
    expect(text).toMatch(/broker_requests_total\{op="ServerTime",outcome="timeout"\} \d+/);
    expect(text).toMatch(/broker_request_duration_seconds_bucket\{le="0.001",op="PF4.UserRecordGet"\} \d+/);
    expect(text).toMatch(new RegExp(`broker_cache_items\\{platform="${PF4_ID}",kind="users"\\} \\d+`));
  });
});

describe('session recovery on demand', () => {
  it('logs in afresh for the next request after a drop, without waiting for the backoff timer', async () => {
    const fake = await FakeManagerServer.start('PF4');
    // A reconnect timer far longer than the test: only the request itself can bring the session back.
    const broker = await startBroker({
      secret: SECRET,
      platforms: [platform(PF4_ID, fake)],
      session: { backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.99 },
    });
    const link = await TestLink.open(broker.port, SECRET);
    try {
      await eventually(async () => (await health(broker)).status === 200);
      fake.drop();
      await eventually(async () => (await health(broker)).status === 503);
      const logins = fake.logins;
      const time = ok(await link.call(PF4_ID, 'ServerTime', {}, 3000));
      expect(Date.parse(time.data as string)).not.toBeNaN();
      expect(fake.logins).toBe(logins + 1);
      expect((await health(broker)).status).toBe(200);
    } finally {
      await link.close();
      await broker.close();
      await fake.close();
    }
  });

  it('makes cached reads wait for the first resync instead of answering NotFound', async () => {
    const fake = await FakeManagerServer.start('PF4');
    fake.resyncDelayMs = 300;
    const broker = await startBroker({ secret: SECRET, platforms: [platform(PF4_ID, fake)], session: FAST });
    const link = await TestLink.open(broker.port, SECRET);
    try {
      const user = ok(await link.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }, 3000));
      expect(user.data).toMatchObject({ login: 100001 });
      // With a budget shorter than the wait, the answer is a time-out, not a false not-found.
      fake.resyncDelayMs = 2000;
      const other = await startBroker({ secret: SECRET, platforms: [platform(PF4_ID, fake)], session: FAST });
      const otherLink = await TestLink.open(other.port, SECRET);
      try {
        const r = failed(await otherLink.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }, 200));
        expect(r).toMatchObject({ timedOut: true, error: { code: 'NoConnect' } });
      } finally {
        await otherLink.close();
        await other.close();
      }
    } finally {
      await link.close();
      await broker.close();
      await fake.close();
    }
  });

  it('keeps the session alive with pings and reconnects when they go unanswered', async () => {
    const fake = await FakeManagerServer.start('PF5');
    const broker = await startBroker({
      secret: SECRET,
      platforms: [platform(PF5_ID, fake)],
      session: { ...FAST, pingIntervalMs: 100, pingTimeoutMs: 150 },
    });
    try {
      // Answered pings keep the one session: two pings and still the first connection and login.
      await eventually(() => fake.count('Ping') >= 2);
      expect({ connections: fake.connections, logins: fake.logins }).toEqual({ connections: 1, logins: 1 });
      fake.delays.set('Ping', 1000); // a frozen server: the socket stays open, nothing is answered
      await eventually(() => fake.logins > 1, 3000);
      // The broker gave up on the silent connection and logged in on a new one.
      expect(fake.connections).toBeGreaterThan(1);
      expect(fake.received.filter((r) => r.cmd === 'login').length).toBe(fake.logins);
    } finally {
      await broker.close();
      await fake.close();
    }
  });
});

describe('edge link heartbeat', () => {
  it('closes a link whose peer stops answering pings and keeps one that answers', async () => {
    const broker = await startBroker({ secret: SECRET, platforms: [], linkHeartbeatMs: 100 });
    const open = (autoPong: boolean) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${broker.port}/link`, {
          headers: { authorization: `Bearer ${SECRET}` },
          autoPong,
        });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const silent = await open(false);
    const healthy = await open(true);
    try {
      let silentClosed = false;
      silent.once('close', () => {
        silentClosed = true;
      });
      await eventually(() => silentClosed, 3000);
      expect(healthy.readyState).toBe(WebSocket.OPEN);
    } finally {
      silent.terminate();
      healthy.terminate();
      await broker.close();
    }
  });
});

describe('platform file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'broker-platforms-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the platforms of the file and follows additions, changes and removals', async () => {
    const pf4 = await FakeManagerServer.start('PF4');
    const pf5 = await FakeManagerServer.start('PF5');
    const file = join(dir, 'broker-platforms.json');
    const write = (platforms: PlatformConfig[]) => writeFileSync(file, JSON.stringify({ platforms }));
    write([platform(PF4_ID, pf4)]);
    const logged: LogFields[] = [];
    const log = Object.assign(
      (_level: string, fields: LogFields) => {
        logged.push(fields);
      },
      { minLevel: 'debug' as const },
    );
    const broker = await startBroker({ secret: SECRET, platformsFile: file, watchIntervalMs: 50, session: FAST, log });
    try {
      await eventually(async () => (await health(broker)).status === 200);
      expect(Object.keys((await health(broker)).body.platforms)).toEqual([PF4_ID]);

      write([platform(PF4_ID, pf4), platform(PF5_ID, pf5)]);
      await eventually(async () => {
        const h = await health(broker);
        return h.status === 200 && Object.keys(h.body.platforms).length === 2;
      });

      // A changed password means a fresh login with it; a wrong one leaves the platform down.
      write([platform(PF4_ID, pf4, 'wrong'), platform(PF5_ID, pf5)]);
      await eventually(async () =>
        (await health(broker)).body.platforms[PF4_ID]?.lastError?.includes('invalid account'),
      );
      expect((await health(broker)).status).toBe(503);

      // A damaged file changes nothing: once the broker has read and refused it, both platforms are still served.
      const sessionsBefore = pf5.logins;
      writeFileSync(file, '{"platforms": [');
      await eventually(() => logged.some((f) => f.msg === 'platform file not applied'));
      expect(Object.keys((await health(broker)).body.platforms).sort()).toEqual([PF4_ID, PF5_ID].sort());
      expect(pf5.logins).toBe(sessionsBefore);

      write([platform(PF5_ID, pf5)]);
      await eventually(async () => {
        const h = await health(broker);
        return h.status === 200 && Object.keys(h.body.platforms).join() === PF5_ID;
      });
    } finally {
      await broker.close();
      await pf4.close();
      await pf5.close();
    }
  });

  it('refuses to start on a damaged file, and starts empty without one', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ platforms: [{ id: 'x', family: 'PF6' }] }));
    await expect(startBroker({ secret: SECRET, platformsFile: bad })).rejects.toThrow(/family/);
    const broker = await startBroker({ secret: SECRET, platformsFile: join(dir, 'missing.json') });
    try {
      expect(await health(broker)).toEqual({ status: 200, body: { status: 'ok', platforms: {} } });
    } finally {
      await broker.close();
    }
  });
});
