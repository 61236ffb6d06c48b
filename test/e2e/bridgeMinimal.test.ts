/**
 * The minimal bridge (examples/bridge-minimal/) as a real trading server behind the real broker and edge: the bridge
 * runs as its own process (`npm run bridge:minimal`'s entry, seed world, an ephemeral port) and the stack's demo PF4
 * platform points at it (`tradingServers`), the simulator serving only the PF5 one. Through the edge: a cached read
 * of an account (from the bridge's snapshot), a live read, a password check, a write and the `users` event it raises
 * (the cached read then answers the written value), and operations needing a command or an event kind the bridge did
 * not declare, refused by the broker before anything is sent, naming what is missing (v2 PF4Error without a manager
 * code, v1 501).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MANAGER_LOGIN } from '../../launcher/demo.js';
import { startService, type Service } from '../../launcher/stack.js';
import { eventually, startClient, waitHealthy, type Client } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { DEFAULT_LINKS_PER_PLATFORM, pickLink } from '../../workers/gateway/names.js';
import type { ReplicaStats } from '../../workers/gateway/edgeReplica.js';
import { LOCAL_HOME } from '../support/edge.js';

const PASSWORD = randomBytes(18).toString('base64url');
let bridge: Service;
let c: Client;
const bridgeLines: string[] = [];

beforeAll(async () => {
  bridge = await startService(
    'bridge-minimal',
    'examples/bridge-minimal/main.ts',
    {
      BRIDGE_PORT: '0',
      BRIDGE_MANAGER_LOGIN: String(DEMO_MANAGER_LOGIN),
      BRIDGE_MANAGER_PASSWORD: PASSWORD,
    },
    (line) => bridgeLines.push(line),
  );
  // The stack's demo manager password, which its brokers log in to the bridge with (the bridge was given it above).
  const saved = process.env.SIM_MANAGER_PASSWORD;
  process.env.SIM_MANAGER_PASSWORD = PASSWORD;
  try {
    c = await startClient({ tradingServers: { pf4: `ws://127.0.0.1:${bridge.port}/minimal-pf4` } });
  } finally {
    if (saved === undefined) delete process.env.SIM_MANAGER_PASSWORD;
    else process.env.SIM_MANAGER_PASSWORD = saved;
  }
  await waitHealthy(c);
}, 90_000);

afterAll(async () => {
  await c?.stack.close();
  await bridge?.stop();
});

type Rec = Record<string, any>;
const data = async (path: string) => {
  const res = await c.get(path);
  expect(res.body.error, `${path}: ${JSON.stringify(res.body.error)}`).toBeNull();
  expect(res.status).toBe(200);
  return res.body.data;
};

describe('the minimal bridge behind the broker and edge', () => {
  it('prints the URL it listens on, and the broker logs in to it', () => {
    expect(bridgeLines.some((line) => line.includes(`"url":"ws://127.0.0.1:${bridge.port}/minimal-pf4"`))).toBe(true);
    expect(
      bridgeLines.some(
        (line) => line.includes('"msg":"manager logged in"') && line.includes(`"login":${DEMO_MANAGER_LOGIN}`),
      ),
    ).toBe(true);
    expect(bridgeLines.join('\n')).not.toContain(PASSWORD);
  });

  it("answers a cached read of an account from the bridge's snapshot", async () => {
    expect(await data(`${c.v2pf4}/UserRecordGet/100001`)).toMatchObject({
      login: 100001,
      group: 'demo',
      name: 'Alice Example',
      email: 'alice@example.com',
      balance: 10000,
      leverage: 100,
    });
    expect((await data(`${c.v2pf4}/GroupsGet`)).map((g: Rec) => g.group)).toEqual(['demo', 'vip']);
  });

  it('answers a live read from the bridge, an unknown login as not found', async () => {
    expect(await data(`${c.v2pf4}/UserRecordRequest/100002`)).toMatchObject({
      login: 100002,
      name: 'Bruno Example',
      balance: 2500.5,
      city: 'Porto',
    });
    const missing = await c.get(`${c.v2pf4}/UserRecordRequest/999`);
    expect(missing.body.error).toEqual({
      code: 'NotFound',
      managerCode: 'InvalidData',
      message: 'login 999 not found',
    });
  });

  it("checks a password: true for the account's, false for another", async () => {
    const check = (password: string) => c.post(`${c.v2pf4}/UserPasswordCheck/100001`, password);
    expect((await check('demo-100001')).body).toMatchObject({ data: true, error: null });
    expect((await check('not-the-password')).body.data).toBe(false);
  });

  it('writes an account; its users event brings the written value to the cached read', async () => {
    const written = await c.post(`${c.v2pf4}/UserRecordUpdate/100003`, {
      name: 'Chiara Renamed',
      city: 'Milan',
      balance: 1,
    });
    expect(written.body.error).toBeNull();
    // The server keeps the balance (moved only by balance transactions).
    expect(written.body.data).toMatchObject({
      login: 100003,
      name: 'Chiara Renamed',
      city: 'Milan',
      balance: 125000,
      group: 'vip',
    });
    const cached = await eventually(async () => {
      const user = await data(`${c.v2pf4}/UserRecordGet/100003`);
      return user.name === 'Chiara Renamed' ? user : undefined;
    });
    expect(cached).toMatchObject({ login: 100003, name: 'Chiara Renamed', city: 'Milan', balance: 125000 });
    expect(await data(`${c.v2pf4}/UserRecordRequest/100003`)).toEqual(cached);
  });

  it('refuses an operation whose command the bridge did not declare, naming it (v2 PF4Error without a manager code, v1 501)', async () => {
    const v2 = await c.get(`${c.v2pf4}/MarginLevelRequest/100001`);
    expect(v2.body).toMatchObject({
      data: null,
      error: {
        code: 'PF4Error',
        managerCode: null,
        message: 'the trading server does not implement MarginLevelRequest (not among the commands its login declared)',
      },
    });
    const v1 = await c.get(`${c.v1pf4}/MarginLevelRequest/100001`);
    expect(v1.status).toBe(501);
    expect(v1.body).toEqual({
      errorType: 'PF4Error',
      errorCode: 'PF4Error',
      errorDescription:
        'the trading server does not implement MarginLevelRequest (not among the commands its login declared)',
    });
  });

  it('refuses a cached read of a kind the bridge does not push, naming the event kind, also once replicas are in sync', async () => {
    const refusal = {
      code: 'PF4Error',
      managerCode: null,
      message: 'the trading server does not implement the trades event (not among the event kinds its login declared)',
    };
    const trades = await c.get(`${c.v2pf4}/TradesGet`);
    expect(trades.body.error).toEqual(refusal);
    // A link object's replica leaves out the tables of undeclared kinds: with it in sync, the broker still refuses.
    const traceId = randomBytes(16).toString('hex');
    const headers = { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
    const link = pickLink(c.stack.platforms.pf4, LOCAL_HOME.region, traceId, DEFAULT_LINKS_PER_PLATFORM);
    const replica = async () =>
      (await objectCall<{ replica: ReplicaStats | null }>(c.stack.edge.miniflare, 'LINKS', link, 'stats')).replica;
    const synced = await eventually(async () => {
      await c.get(`${c.v2pf4}/UserRecordGet/100001`, headers);
      return (await replica())?.inSync === true;
    }, 20_000);
    expect(synced, 'the link object holds an in-sync replica').toBe(true);
    expect(Object.keys((await replica())!.tables)).not.toContain('trades');
    expect((await c.get(`${c.v2pf4}/TradesGet`, headers)).body.error).toEqual(refusal);
  });
});
