/**
 * /healthz across the edge, scripted brokers and the registry: 200 `ok` when every broker of each registered PF4/PF5
 * platform's list serves it (up, or a cold standby), 200 `degraded` when some platform is served by some of its
 * brokers only, 503 `down` when a platform is served by none (or none of its brokers answers) or no default broker
 * answers. Anonymous probes learn only the tiers; platform ids and states go to an authenticated caller, for its own
 * organization's platforms only, and its status is decided by those platforms and the brokers serving them alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, ORG_A, ORG_B, PF4_A, PF4_B, PF5_A, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let standby: FakeBroker;

const up = (family: string) => ({ family, up: true, since: new Date().toISOString(), lastError: null });
const down = (family: string) => ({ ...up(family), up: false, lastError: 'connect refused' });
const cold = (family: string, asleep = true) => ({ ...up(family), up: false, standby: 'cold', asleep });
const allUp = () => ({
  status: 200,
  body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } },
});

/** The URL of a broker that was started and stopped: nothing answers there. */
async function goneBroker(): Promise<string> {
  const gone = await startFakeBroker();
  await gone.close();
  return gone.url;
}

/** Sets the brokers of an organization's platforms in the registry (null: the edge's default list). */
async function serveBy(target: TestEdge, org: string, urls: string[] | null) {
  await (await target.db())
    .prepare('UPDATE trade_platforms SET broker_urls = ?, broker_url = ? WHERE organization_id = ?')
    .bind(urls && JSON.stringify(urls), urls?.[0] ?? null, org)
    .run();
}

beforeAll(async () => {
  [broker, standby] = await Promise.all([startFakeBroker(), startFakeBroker()]);
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url } });
  // A PFOther platform is not served by a broker and must not hold health down.
  const db = await edge.db();
  await db
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .bind(
      'c0000000-0000-4000-8000-0000000000c0',
      'other',
      'PFOther',
      '0a000000-0000-4000-8000-00000000000a',
      null,
      new Date().toISOString(),
    )
    .run();
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
  await standby?.close();
});

const healthz = async (token?: string) => {
  const res = await fetch(new URL('/healthz', edge.url), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, body: await res.json() };
};

describe('/healthz', () => {
  it('is 200 when the broker reports every registered platform up', async () => {
    broker.health = {
      status: 200,
      body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } },
    };
    expect(await healthz()).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: 'up' },
    });
    expect(await healthz(await edge.token())).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
    });
  });

  it('names no platform to an anonymous probe, and only its own to an authenticated caller', async () => {
    broker.health = {
      status: 200,
      body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } },
    };
    const anonymous = JSON.stringify((await healthz()).body);
    for (const id of [PF4_A, PF5_A, PF4_B]) expect(anonymous).not.toContain(id);
    const orgB = await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }));
    expect(orgB).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'up' } },
    });
    // Another organization's platform being down is that organization's business, and the anonymous tier's.
    broker.health = {
      status: 503,
      body: {
        status: 'degraded',
        platforms: { [PF4_A]: { ...up('PF4'), up: false }, [PF5_A]: up('PF5'), [PF4_B]: up('PF4') },
      },
    };
    expect((await healthz()).body).toStrictEqual({ status: 'down', edge: 'up', broker: 'up', platforms: 'down' });
    expect(await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'up' } },
    });
    // A bad token is refused, not taken for an anonymous probe.
    const bad = await fetch(new URL('/healthz', edge.url), { headers: { authorization: 'Bearer not-a-token' } });
    expect(bad.status).toBe(401);
  });

  it("answers an authenticated caller 200 while only another organization's platform is down", async () => {
    broker.health = {
      status: 503,
      body: {
        status: 'degraded',
        platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: { ...up('PF4'), up: false } },
      },
    };
    expect(await healthz(await edge.token())).toStrictEqual({
      status: 200,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
    });
    expect(await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
      status: 503,
      body: { status: 'down', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'down' } },
    });
    expect(await healthz()).toStrictEqual({
      status: 503,
      body: { status: 'down', edge: 'up', broker: 'up', platforms: 'down' },
    });
  });

  it("decides an authenticated caller's status by the brokers serving its platforms, not the default broker", async () => {
    broker.health = allUp();
    // The default broker does not answer; ORG_A's platforms are registered on the scripted broker, ORG_B's are not.
    const split = await startTestEdge({ vars: { BROKER_URL: await goneBroker() } });
    try {
      await serveBy(split, ORG_A, [broker.url]);
      const get = async (token?: string) => {
        const res = await fetch(new URL('/healthz', split.url), {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      expect(await get(await split.token())).toStrictEqual({
        status: 200,
        body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
      });
      expect(await get(await split.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'down', platforms: { [PF4_B]: 'unknown' } },
      });
      // One broker asked answers, the default one does not.
      expect(await get()).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'degraded', platforms: 'down' },
      });
      // Every platform back on the default list, which has no broker answering: down, the broker tier too.
      await serveBy(split, ORG_A, null);
      expect(await get()).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'down', platforms: 'down' },
      });
      expect(await get(await split.token())).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'down', platforms: { [PF4_A]: 'unknown', [PF5_A]: 'unknown' } },
      });
    } finally {
      await split.close();
    }
  });

  it('is 503 naming the platform that is down or unknown to the broker', async () => {
    broker.health = {
      status: 503,
      body: {
        status: 'degraded',
        platforms: { [PF4_A]: up('PF4'), [PF5_A]: { ...up('PF5'), up: false, lastError: 'login refused' } },
      },
    };
    const res = await healthz(await edge.token());
    expect(res.status).toBe(503);
    expect(res.body).toStrictEqual({
      status: 'down',
      edge: 'up',
      broker: 'up',
      platforms: { [PF4_A]: 'up', [PF5_A]: 'down' },
    });
    expect(JSON.stringify(res.body)).not.toContain('login refused');
    expect(await healthz()).toStrictEqual({
      status: 503,
      body: { status: 'down', edge: 'up', broker: 'up', platforms: 'down' },
    });
  });

  it('is up while every broker of a pair serves the platform, a cold standby included, and degraded (200) when one does not', async () => {
    broker.health = allUp();
    standby.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5') } } };
    await serveBy(edge, ORG_A, [broker.url, standby.url]);
    try {
      const token = await edge.token();
      const mine = (states: Record<string, string>, status = 'ok', brokers = 'up') => ({
        status,
        edge: 'up',
        broker: brokers,
        platforms: states,
      });
      expect(await healthz(token)).toStrictEqual({ status: 200, body: mine({ [PF4_A]: 'up', [PF5_A]: 'up' }) });
      expect(await healthz()).toStrictEqual({
        status: 200,
        body: { status: 'ok', edge: 'up', broker: 'up', platforms: 'up' },
      });

      // An asleep cold standby logs in on its first call: it serves the platform. Woken, it serves once logged in.
      standby.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: cold('PF4'), [PF5_A]: up('PF5') } } };
      expect(await healthz(token)).toStrictEqual({ status: 200, body: mine({ [PF4_A]: 'up', [PF5_A]: 'up' }) });
      standby.health = {
        status: 200,
        body: { status: 'ok', platforms: { [PF4_A]: cold('PF4', false), [PF5_A]: up('PF5') } },
      };
      expect(await healthz(token)).toStrictEqual({
        status: 200,
        body: mine({ [PF4_A]: 'degraded', [PF5_A]: 'up' }, 'degraded'),
      });
      standby.health = {
        status: 200,
        body: { status: 'ok', platforms: { [PF4_A]: { ...cold('PF4', false), up: true }, [PF5_A]: up('PF5') } },
      };
      expect(await healthz(token)).toStrictEqual({ status: 200, body: mine({ [PF4_A]: 'up', [PF5_A]: 'up' }) });

      // The standby lost PF5_A's session: it runs on the primary alone.
      standby.health = {
        status: 503,
        body: { status: 'degraded', platforms: { [PF4_A]: up('PF4'), [PF5_A]: down('PF5') } },
      };
      expect(await healthz(token)).toStrictEqual({
        status: 200,
        body: mine({ [PF4_A]: 'up', [PF5_A]: 'degraded' }, 'degraded'),
      });
      expect(await healthz()).toStrictEqual({
        status: 200,
        body: { status: 'degraded', edge: 'up', broker: 'up', platforms: 'degraded' },
      });
      // Another organization sees its own platforms, all up.
      expect(await healthz(await edge.token({ client_id: 'client-b', org: ORG_B }))).toStrictEqual({
        status: 200,
        body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_B]: 'up' } },
      });

      // The primary lost it too: served by none of its brokers.
      broker.health = {
        status: 503,
        body: { status: 'degraded', platforms: { [PF4_A]: up('PF4'), [PF5_A]: down('PF5'), [PF4_B]: up('PF4') } },
      };
      expect(await healthz(token)).toStrictEqual({
        status: 503,
        body: mine({ [PF4_A]: 'up', [PF5_A]: 'down' }, 'down'),
      });
      expect(await healthz()).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'up', platforms: 'down' },
      });

      // The primary gone, the standby serving both: degraded, and the broker tier with it; a platform the standby does
      // not list is not served there.
      broker.health = allUp();
      const gone = await goneBroker();
      await serveBy(edge, ORG_A, [gone, standby.url]);
      standby.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5') } } };
      expect(await healthz(token)).toStrictEqual({
        status: 200,
        body: mine({ [PF4_A]: 'degraded', [PF5_A]: 'degraded' }, 'degraded', 'degraded'),
      });
      standby.health = { status: 200, body: { status: 'ok', platforms: { [PF4_A]: up('PF4') } } };
      expect(await healthz(token)).toStrictEqual({
        status: 503,
        body: mine({ [PF4_A]: 'degraded', [PF5_A]: 'down' }, 'down', 'degraded'),
      });

      // Neither broker of the pair answers: unknown.
      await serveBy(edge, ORG_A, [gone, await goneBroker()]);
      expect(await healthz(token)).toStrictEqual({
        status: 503,
        body: mine({ [PF4_A]: 'unknown', [PF5_A]: 'unknown' }, 'down', 'down'),
      });
      expect(await healthz()).toStrictEqual({
        status: 503,
        body: { status: 'down', edge: 'up', broker: 'degraded', platforms: 'down' },
      });
    } finally {
      await serveBy(edge, ORG_A, null);
    }
  });

  it('is degraded (200) while one broker of the default list does not answer', async () => {
    broker.health = allUp();
    const gone = await goneBroker();
    const paired = await startTestEdge({ vars: { BROKER_URL: `${gone}, ${broker.url}` } });
    try {
      const get = async (target: TestEdge, token?: string) => {
        const res = await fetch(new URL('/healthz', target.url), {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      expect(await get(paired)).toStrictEqual({
        status: 200,
        body: { status: 'degraded', edge: 'up', broker: 'degraded', platforms: 'degraded' },
      });
      expect(await get(paired, await paired.token())).toStrictEqual({
        status: 200,
        body: {
          status: 'degraded',
          edge: 'up',
          broker: 'degraded',
          platforms: { [PF4_A]: 'degraded', [PF5_A]: 'degraded' },
        },
      });
      // With every platform on brokers of its own that serve it, the default list still answers for the deployment.
      await serveBy(paired, ORG_A, [broker.url]);
      await serveBy(paired, ORG_B, [broker.url]);
      expect(await get(paired)).toStrictEqual({
        status: 200,
        body: { status: 'degraded', edge: 'up', broker: 'degraded', platforms: 'up' },
      });
      expect(await get(paired, await paired.token())).toStrictEqual({
        status: 200,
        body: { status: 'ok', edge: 'up', broker: 'up', platforms: { [PF4_A]: 'up', [PF5_A]: 'up' } },
      });
      await serveBy(paired, ORG_A, null);
      await serveBy(paired, ORG_B, null);
    } finally {
      await paired.close();
    }
  });
});
