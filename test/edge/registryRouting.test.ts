/**
 * Which broker a call goes to and how soon registry changes reach the edge, through the real worker against scripted
 * brokers: a platform's own brokers (the first of its list) over BROKER_URL, moving a platform to another broker, and
 * REGISTRY_CACHE_SECONDS (0 reads the registry on every call; otherwise, within that time a removed or moved platform
 * is still served as it was and after it it is not; a cached platform never answers another organization). The
 * default of 5 s is the unit tests' (workers/registry/registryRoutes.test.ts); here the cached edge keeps 2 s, so the
 * waits for the cache time to pass are short.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ORG_A, ORG_B, PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';
import { brokerUrlsColumn } from '../../shared/brokerUrls.js';

/** The `cached` edge's REGISTRY_CACHE_SECONDS, in ms. */
const CACHE_MS = 2_000;

let home: FakeBroker;
let other: FakeBroker;
let uncached: TestEdge;
let cached: TestEdge;

beforeAll(async () => {
  [home, other] = await Promise.all([startFakeBroker(), startFakeBroker()]);
  [uncached, cached] = await Promise.all([
    startTestEdge({ vars: { BROKER_URL: home.url, REGISTRY_CACHE_SECONDS: '0' } }),
    startTestEdge({ vars: { BROKER_URL: home.url, REGISTRY_CACHE_SECONDS: String(CACHE_MS / 1000) } }),
  ]);
}, 60_000);
afterAll(async () => {
  await uncached?.close();
  await cached?.close();
  await home?.close();
  await other?.close();
});
beforeEach(() => {
  for (const broker of [home, other]) {
    broker.frames.length = 0;
    broker.script.clear();
    broker.script.set('ServerTime', { reply: { ok: true, data: 'from the broker' } });
  }
});

interface Answer {
  status: number;
  body: any;
  text: string;
}

async function get(edge: TestEdge, path: string, token: string): Promise<Answer> {
  const res = await fetch(new URL(path, edge.url), { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text };
}
const serverTime = (edge: TestEdge, platform: string, token: string) =>
  get(edge, `/api/v2/PF4/${platform}/ServerTime`, token);

/** A PF4 platform of `org`, served by `brokerUrl` (null: the edge's BROKER_URL), or by a list, as the registry stores it. */
async function addPlatform(edge: TestEdge, org: string, brokerUrl: string | string[] | null): Promise<string> {
  const id = randomUUID();
  const urls = typeof brokerUrl === 'string' ? [brokerUrl] : brokerUrl;
  await (await edge.db())
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, broker_urls, broker_url, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(
      id,
      `platform ${id.slice(0, 8)}`,
      'PF4',
      org,
      brokerUrlsColumn(urls),
      urls?.[0] ?? null,
      new Date(0).toISOString(),
    )
    .run();
  return id;
}
const setBroker = async (edge: TestEdge, id: string, brokerUrl: string | null) =>
  (await edge.db())
    .prepare('UPDATE trade_platforms SET broker_urls = ?, broker_url = ? WHERE id = ?')
    .bind(brokerUrlsColumn(brokerUrl === null ? null : [brokerUrl]), brokerUrl, id)
    .run();
const removePlatform = async (edge: TestEdge, id: string) =>
  (await edge.db()).prepare('DELETE FROM trade_platforms WHERE id = ?').bind(id).run();

/** Waits until this process's clock (the edge's too: same machine) has passed `time`. */
async function clockPast(time: number): Promise<void> {
  while (Date.now() <= time) await new Promise((r) => setTimeout(r, Math.min(100, time - Date.now() + 1)));
}

const notFound = (id: string) => ({ code: 'NotFound', managerCode: null, message: `trade platform ${id} not found` });

describe('routing by broker', () => {
  it("sends a platform's calls to its own broker URL, and the others to BROKER_URL", async () => {
    const token = await uncached.token();
    const own = await addPlatform(uncached, ORG_A, other.url);
    expect((await serverTime(uncached, own, token)).body.data).toBe('from the broker');
    expect((await serverTime(uncached, PF4_A, token)).body.data).toBe('from the broker');
    expect(other.frames.map((f) => [f.platform, f.op])).toEqual([[own, 'ServerTime']]);
    expect(home.frames.map((f) => [f.platform, f.op])).toEqual([[PF4_A, 'ServerTime']]);
  });

  it('sends a platform named by a list to its first broker, and one written by a previous version to its broker_url', async () => {
    const token = await uncached.token();
    // A pair of its own: the link object of a platform with two brokers keeps talking to them (heartbeats), which
    // the other cases' brokers must not see.
    const [first, second] = await Promise.all([startFakeBroker(), startFakeBroker()]);
    try {
      first.script.set('ServerTime', { reply: { ok: true, data: 'from the first' } });
      const paired = await addPlatform(uncached, ORG_A, [first.url, second.url]);
      expect((await serverTime(uncached, paired, token)).body.data).toBe('from the first');
      expect(first.framesFor('ServerTime').map((f) => f.platform)).toEqual([paired]);
      expect(second.framesFor('ServerTime')).toEqual([]);
      await removePlatform(uncached, paired);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }

    const legacy = randomUUID();
    await (await uncached.db())
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(legacy, 'legacy', 'PF4', ORG_A, other.url, new Date(0).toISOString())
      .run();
    expect((await serverTime(uncached, legacy, token)).body.data).toBe('from the broker');
    expect(other.framesFor('ServerTime').map((f) => f.platform)).toEqual([legacy]);
    expect(home.framesFor('ServerTime')).toEqual([]);
    await removePlatform(uncached, legacy);
  });

  it('moves a platform to another broker: the next call goes there, and a change pending on the old one stays of unknown outcome', async () => {
    const token = await uncached.token();
    const id = await addPlatform(uncached, ORG_A, other.url);
    other.script.set('PF4.UserRecordNew', { hang: true });
    const pending = fetch(new URL(`/api/v2/PF4/${id}/UserRecordNew?requestTimeout=1.5`, uncached.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ group: 'g', name: 'n' }),
    });
    await until(
      () => Promise.resolve(other.framesFor('PF4.UserRecordNew').length > 0),
      'the change to reach the old broker',
      15_000,
    );

    await setBroker(uncached, id, home.url);
    const moved = await serverTime(uncached, id, token);
    expect(moved.body).toMatchObject({ data: 'from the broker', error: null });
    expect(home.frames.map((f) => [f.platform, f.op])).toEqual([[id, 'ServerTime']]);
    expect(other.framesFor('ServerTime')).toEqual([]);

    // The old broker never answers it: whether its link is closed by the move or the budget runs out first, the
    // change may have been applied there, and says so.
    const lost = await pending;
    expect(lost.headers.get('x-request-outcome')).toBe('unknown');
    expect(((await lost.json()) as { error: { code: string } }).error.code).toBe('NoConnect');
    expect(home.framesFor('PF4.UserRecordNew')).toEqual([]);
  });
});

describe('REGISTRY_CACHE_SECONDS', () => {
  it('0: a removed platform is unknown on the very next call, and a moved one served by its new broker', async () => {
    const token = await uncached.token();
    const id = await addPlatform(uncached, ORG_A, null);
    expect((await serverTime(uncached, id, token)).body.error).toBeNull();
    await setBroker(uncached, id, other.url);
    expect((await serverTime(uncached, id, token)).body.error).toBeNull();
    expect(other.frames.map((f) => f.platform)).toEqual([id]);
    await removePlatform(uncached, id);
    expect((await serverTime(uncached, id, token)).body.error).toStrictEqual(notFound(id));
    expect((await get(uncached, `/api/TradePlatforms/${id}`, token)).status).toBe(404);
  });

  // The two waits for the cache time run side by side, each on a platform of its own.
  it.concurrent('a removed platform is served as cached until the cache time is up, and not after', async () => {
    const token = await cached.token();
    const id = await addPlatform(cached, ORG_A, null);
    expect((await serverTime(cached, id, token)).body.error).toBeNull();
    const cachedBy = Date.now(); // the edge read the registry before this instant: its entry ends by cachedBy + CACHE_MS
    await removePlatform(cached, id);
    expect((await serverTime(cached, id, token)).body.error).toBeNull();
    await clockPast(cachedBy + CACHE_MS);
    expect((await serverTime(cached, id, token)).body.error).toStrictEqual(notFound(id));
  });

  it.concurrent('a platform moved to another broker is served there once the cache time is up', async () => {
    const token = await cached.token();
    const id = await addPlatform(cached, ORG_A, null);
    await serverTime(cached, id, token);
    const cachedBy = Date.now();
    await setBroker(cached, id, other.url);
    await serverTime(cached, id, token);
    expect(home.frames.filter((f) => f.platform === id)).toHaveLength(2);
    await clockPast(cachedBy + CACHE_MS);
    expect((await serverTime(cached, id, token)).body.error).toBeNull();
    expect(other.frames.map((f) => f.platform)).toEqual([id]);
  });

  it('never answers another organization from a platform cached for its owner', async () => {
    const owner = await cached.token();
    const stranger = await cached.token({ client_id: 'client-b', org: ORG_B });
    const id = await addPlatform(cached, ORG_A, null);
    const unknownId = randomUUID();
    // The owner's read puts the platform in the cache; the stranger asks inside the cache time.
    expect((await serverTime(cached, id, owner)).body.error).toBeNull();
    const foreign = await serverTime(cached, id, stranger);
    const unknown = await serverTime(cached, unknownId, stranger);
    expect(foreign.body.error).toStrictEqual(notFound(id));
    expect(foreign.text.replace(id, 'X')).toBe(
      unknown.text.replace(unknownId, 'X').replace(unknown.body.meta.activityId, foreign.body.meta.activityId),
    );
    expect((await get(cached, `/api/TradePlatforms/${id}`, stranger)).status).toBe(404);
    expect((await get(cached, `/api/TradePlatforms/${id}`, owner)).status).toBe(200);
    expect(home.frames.map((f) => f.platform)).toEqual([id]);
  });
});

describe('a removed or disabled client', () => {
  it('gets no new token from the moment it is disabled or removed', async () => {
    const token = async (clientId: string, secret: string) =>
      (
        await fetch(new URL('/connect/token', cached.url), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
        })
      ).status;
    const db = await cached.db();
    await cached.seedClient('short-lived', 'secret-1', ORG_A);
    expect(await token('short-lived', 'secret-1')).toBe(200);
    await db.prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind('short-lived').run();
    expect(await token('short-lived', 'secret-1')).toBe(401);
    await db.prepare('UPDATE api_clients SET disabled = 0 WHERE client_id = ?').bind('short-lived').run();
    expect(await token('short-lived', 'secret-1')).toBe(200);
    await db.prepare('DELETE FROM api_clients WHERE client_id = ?').bind('short-lived').run();
    expect(await token('short-lived', 'secret-1')).toBe(401);
  });
});
