/**
 * /healthz across the edge, a scripted broker and the registry: 200 only when the broker answers and reports every
 * registered PF4/PF5 platform up, otherwise 503 with the tier that is down. Anonymous probes learn only the tiers;
 * platform ids and states go to an authenticated caller, for its own organization's platforms only, and its status
 * is decided by those platforms and the brokers serving them alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, ORG_A, ORG_B, PF4_A, PF4_B, PF5_A, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;

const up = (family: string) => ({ family, up: true, since: new Date().toISOString(), lastError: null });

beforeAll(async () => {
  broker = await startFakeBroker();
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url } });
  // A PFOther platform is not served by a broker and must not hold health down.
  const db = await edge.db();
  await db.prepare('INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)')
    .bind('c0000000-0000-4000-8000-0000000000c0', 'other', 'PFOther', '0a000000-0000-4000-8000-00000000000a', null, new Date().toISOString()).run();
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

const healthz = async (token?: string) => {
  const res = await fetch(new URL('/healthz', edge.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as any };
};

describe('/healthz', () => {
  it('is 200 when the broker reports every registered platform up', async () => {
    broker.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } } };
    expect(await healthz()).toStrictEqual({ status: 200, body: { status: 'ok', edge: 'up', broker: 'up', platforms: 'up' } });
    expect(await healthz(await edge.token())).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
    });
  });

  it('names no platform to an anonymous probe, and only its own to an authenticated caller', async () => {
    broker.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } } };
    const anonymous = JSON.stringify((await healthz()).body);
    for (const id of [PF4_A, PF5_A, PF4_B]) expect(anonymous).not.toContain(id);
    const orgB = await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }));
    expect(orgB).toStrictEqual({ status: 200, body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'up' } } });
    // Another organization's platform being down is that organization's business, and the anonymous tier's.
    broker.health = { status: 503, body: { status: 'degraded', platforms: { [PF4_A]: { ...up('PF4'), up: false }, [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } } };
    expect((await healthz()).body).toStrictEqual({ status: 'degraded', edge: 'up', broker: 'up', platforms: 'down' });
    expect(await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'up' } },
    });
    // A bad token is refused, not taken for an anonymous probe.
    const bad = await fetch(new URL('/healthz', edge.url), { headers: { authorization: 'Bearer not-a-token' } });
    expect(bad.status).toBe(401);
  });

  it("answers an authenticated caller 200 while only another organization's platform is down", async () => {
    broker.health = { status: 503, body: { status: 'degraded', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: { ...up('PF4'), up: false } } } };
    expect(await healthz(await edge.token())).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
    });
    expect(await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
      status: 503,
      body: { status: 'degraded', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'down' } },
    });
    expect(await healthz()).toStrictEqual({ status: 503, body: { status: 'degraded', edge: 'up', broker: 'up', platforms: 'down' } });
  });

  it("decides an authenticated caller's status by the brokers serving its platforms, not the default broker", async () => {
    broker.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } } };
    const gone = await startFakeBroker();
    const goneUrl = gone.url;
    await gone.close();
    // The default broker does not answer; ORG_A's platforms are registered on the scripted broker, ORG_B's are not.
    const split = await startTestEdge({ vars: { BROKER_URL: goneUrl } });
    try {
      const db = await split.db();
      await db.prepare('UPDATE trade_platforms SET broker_url = ? WHERE organization_id = ?').bind(broker.url, ORG_A).run();
      const get = async (token?: string) => {
        const res = await fetch(new URL('/healthz', split.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      expect(await get(await split.token())).toStrictEqual({
        status: 200,
        body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
      });
      expect(await get(await split.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
        status: 503,
        body: { status: 'degraded', edge: 'up', broker: 'down', platforms: { [PF4_B]: 'unknown' } },
      });
      expect(await get()).toStrictEqual({ status: 503, body: { status: 'degraded', edge: 'up', broker: 'down', platforms: 'down' } });
    } finally {
      await split.close();
    }
  });

  it('is 503 naming the platform that is down or unknown to the broker', async () => {
    broker.health = { status: 503, body: { status: 'degraded', platforms: { [PF4_A]: up('PF4'), [PF5_A]: { ...up('PF5'), up: false, lastError: 'login refused' } } } };
    const res = await healthz(await edge.token());
    expect(res.status).toBe(503);
    expect(res.body).toStrictEqual({ status: 'degraded', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'down' } });
    expect(JSON.stringify(res.body)).not.toContain('login refused');
    expect(await healthz()).toStrictEqual({ status: 503, body: { status: 'degraded', edge: 'up', broker: 'up', platforms: 'down' } });
  });

  it('is 503 with the broker down when it does not answer', async () => {
    const gone = await startFakeBroker();
    const url = gone.url;
    await gone.close();
    const lonely = await startTestEdge({ vars: { BROKER_URL: url } });
    try {
      const res = await fetch(new URL('/healthz', lonely.url));
      expect(res.status).toBe(503);
      expect(await res.json()).toStrictEqual({ status: 'degraded', edge: 'up', broker: 'down', platforms: 'down' });
    } finally {
      await lonely.close();
    }
  });
});
