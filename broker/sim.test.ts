/**
 * The broker against the real trading-server simulator (`sim/`), in-process: the protocol details the fake server
 * only imitates (resync chunking, event order, result codes, restarts) exercised end to end below the edge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startSim, type RunningSim } from '../sim/index.js';
import { startBroker, type RunningBroker } from './index.js';
import { eventually, failed, ok, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'sim-link-secret';
const PASSWORD = 'sim-manager-password';
const PF4_ID = '6a0c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0004';
const PF5_ID = '6a0c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0005';

let sim: RunningSim;
let broker: RunningBroker;
let link: TestLink;
const simState = async () =>
  (await (await fetch(`http://127.0.0.1:${sim.port}/control/demo-pf4/state`)).json()) as {
    logins: number;
    restarts: number;
    up: boolean;
  };
const healthy = async () => (await fetch(`http://127.0.0.1:${broker.port}/healthz`)).status === 200;

beforeAll(async () => {
  sim = await startSim({ managerPassword: PASSWORD, seed: 7 });
  const server = (name: string) => `ws://127.0.0.1:${sim.port}/${name}`;
  broker = await startBroker({
    secret: SECRET,
    platforms: [
      { id: PF4_ID, family: 'PF4', server: server('demo-pf4'), login: 1000, password: PASSWORD },
      { id: PF5_ID, family: 'PF5', server: server('demo-pf5'), login: 1000, password: PASSWORD },
    ],
    session: { backoff: { baseMs: 50, capMs: 500 } },
  });
  link = await TestLink.open(broker.port, SECRET);
  await eventually(healthy, 10_000);
});
afterAll(async () => {
  await link?.close();
  await broker?.close();
  await sim?.close();
});

describe('broker against the simulator', () => {
  it('answers the same account from the cache and from the server', async () => {
    await eventually(() => broker.platforms.get(PF4_ID)!.cache.ready, 10_000);
    const first = ok(await link.call(PF4_ID, 'PF4.UsersRequest', { limit: 3 }));
    expect(first.paging).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const login = (first.data as Array<{ login: number }>)[0].login;
    const cached = ok(await link.call(PF4_ID, 'PF4.UserRecordGet', { login })).data as Record<string, unknown>;
    const live = ok(await link.call(PF4_ID, 'PF4.UserRecordRequest', { login })).data as Record<string, unknown>;
    expect(cached.login).toBe(login);
    expect(cached.group).toBe(live.group);
    expect(cached.name).toBe(live.name);
    expect(JSON.stringify(cached)).not.toMatch(/password/i);
    for (const op of ['PF4.UserRecordGet', 'PF4.UserRecordRequest']) {
      expect(failed(await link.call(PF4_ID, op, { login: 2147483000 })).error).toMatchObject({
        code: 'NotFound',
        managerCode: PF4_RESULT.InvalidData,
      });
    }
  });

  it('pages open trades and answers the last tick of a traded symbol', async () => {
    const page = ok(await link.call(PF4_ID, 'PF4.TradesGet', { limit: 10 }));
    const trades = page.data as Array<{ order: number; symbol: string }>;
    expect(trades).toHaveLength(10);
    const next = ok(await link.call(PF4_ID, 'PF4.TradesGet', { limit: 10, cursor: page.paging!.nextCursor }));
    expect((next.data as Array<{ order: number }>)[0].order).toBeGreaterThan(trades[9].order);
    const ticket = ok(await link.call(PF4_ID, 'PF4.TradesGetTicket', { ticket: trades[0].order }));
    expect(ticket.data).toMatchObject({ order: trades[0].order });
    const tick = ok(await link.call(PF4_ID, 'PF4.TickInfoLastSymbol', { symbol: trades[0].symbol })).data as {
      bid: number;
      ask: number;
    };
    expect(tick.ask).toBeGreaterThan(tick.bid);
  });

  it('creates an account and sees it in the cache through the change stream', async () => {
    const group = (ok(await link.call(PF4_ID, 'PF4.UsersRequest', { limit: 1 })).data as Array<{ group: string }>)[0]
      .group;
    const created = ok(
      await link.call(PF4_ID, 'PF4.UserRecordNew', { body: { login: 0, group, name: 'Broker Test' } }),
    );
    const login = (created.data as { login: number }).login;
    const cached = await eventually(async () => {
      const r = await link.call(PF4_ID, 'PF4.UserRecordGet', { login });
      return r.ok ? r.data : null;
    });
    expect(cached).toMatchObject({ login, name: 'Broker Test' });
  });

  it('answers PF5 time and cached users, with ErrNotfound for an unknown login', async () => {
    await eventually(() => broker.platforms.get(PF5_ID)!.cache.ready, 10_000);
    expect(Date.parse(ok(await link.call(PF5_ID, 'ServerTime')).data as string)).not.toBeNaN();
    const users = broker.platforms.get(PF5_ID)!.cache.table('users')!.page(undefined, 1).items;
    expect(ok(await link.call(PF5_ID, 'PF5.UserGet', { login: users[0].login })).data).toMatchObject({
      login: users[0].login,
    });
    expect(failed(await link.call(PF5_ID, 'PF5.UserGet', { login: 999999999 })).error).toMatchObject({
      code: 'NotFound',
      managerCode: PF5_RESULT.ErrNotfound,
    });
  });

  it('reports a platform down once its server freezes (no answers, no close), and up again after the thaw', async () => {
    const control = (on: boolean) =>
      fetch(`http://127.0.0.1:${sim.port}/control/demo-pf5/freeze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ on }),
      });
    const keepAlive = {
      pingIntervalMs: 100,
      pingTimeoutMs: 100,
      connectTimeoutMs: 3000,
      backoff: { baseMs: 50, capMs: 200 },
    };
    const watcher = await startBroker({
      secret: SECRET,
      platforms: [
        { id: PF5_ID, family: 'PF5', server: `ws://127.0.0.1:${sim.port}/demo-pf5`, login: 1000, password: PASSWORD },
      ],
      session: keepAlive,
    });
    const pf5Health = async () =>
      (
        (await (await fetch(`http://127.0.0.1:${watcher.port}/healthz`)).json()) as {
          platforms: Record<string, { up: boolean; lastError: string | null }>;
        }
      ).platforms[PF5_ID];
    try {
      await eventually(async () => (await pf5Health()).up, 10_000);
      expect((await control(true)).status).toBe(200);
      // The socket stays open and nothing is answered: only the keep-alive can tell.
      const down = await eventually(
        async () => {
          const h = await pf5Health();
          return h.up ? null : h;
        },
        10_000,
        10,
      );
      // Down, it still shows what the server's last login declared.
      expect(down).toStrictEqual({
        family: 'PF5',
        up: false,
        since: expect.any(String),
        lastError: 'keep-alive ping not answered',
        tradingServer: expect.objectContaining({
          version: 1,
          server: 'demo-pf5',
          family: 'PF5',
          commandCount: expect.any(Number),
        }),
      });
      expect((await control(false)).status).toBe(200);
      expect(await eventually(async () => (await pf5Health()).up, 10_000)).toBe(true);
    } finally {
      await control(false);
      await watcher.close();
    }
  });

  it('survives SrvRestart and a dropped connection, logging in afresh and resyncing', async () => {
    const before = await simState();
    expect(ok(await link.call(PF4_ID, 'PF4.SrvRestart', {}, 60_000)).data).toBe(true);
    // SrvRestart answers before the server goes down: wait for the restart itself to have come and gone.
    await eventually(async () => {
      const now = await simState();
      return now.restarts > before.restarts && now.up;
    }, 15_000);
    const time = await eventually(
      async () => {
        const r = await link.call(PF4_ID, 'ServerTime');
        return r.ok ? r.data : null;
      },
      15_000,
      100,
    );
    expect(typeof time).toBe('string');
    expect((await simState()).logins).toBeGreaterThan(before.logins);

    const resyncs = broker.platforms.get(PF4_ID)!.cache.resyncs;
    await fetch(`http://127.0.0.1:${sim.port}/control/demo-pf4/drop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await eventually(() => broker.platforms.get(PF4_ID)!.cache.resyncs > resyncs, 10_000);
    await eventually(healthy, 10_000);
    expect(ok(await link.call(PF4_ID, 'Ping')).data).toMatchObject({ ok: true });
  });
});
