/**
 * Revocation within the registry cache time (REGISTRY_CACHE_SECONDS, 1 s here) on every route, tokens already issued
 * included: a disabled or removed client's token stops opening the registry routes, reads and writes, and works again
 * once the client is enabled; a narrowed client's token loses the removed scope; a removed platform, or one moved to
 * another organization, is unknown on every route of its former organization. Real worker, scripted broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, ORG_A, ORG_B, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

const CACHE_SECONDS = 1;
let edge: TestEdge;
let broker: FakeBroker;

beforeAll(async () => {
  broker = await startFakeBroker();
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url, REGISTRY_CACHE_SECONDS: String(CACHE_SECONDS) } });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), challenge: res.headers.get('www-authenticate') };
}

/** One call of each kind the client could make: a registry read, a v2 read, a v2 write, a v1 read. */
const everyRoute = (platform: string) =>
  [
    ['GET', '/api/Organizations', undefined],
    ['GET', `/api/TradePlatforms/${platform}`, undefined],
    ['GET', `/api/v2/PF4/${platform}/ServerTime`, undefined],
    ['POST', `/api/v2/PF4/${platform}/UserRecordNew`, { group: 'demo', name: 'Revoked' }],
    ['GET', `/api/PF4/${platform}/UserRecordGet/5`, undefined],
  ] as const;

/** Past the cache time, measured from the change: every route refuses by then, which polling would not show. */
const pastCacheTime = () => new Promise((r) => setTimeout(r, CACHE_SECONDS * 1000 + 300));

async function newPlatform(organizationId: string) {
  const id = crypto.randomUUID();
  const db = await edge.db();
  await db
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .bind(id, 'P', 'PF4', organizationId, null, new Date().toISOString())
    .run();
  return id;
}

// Each case has clients and platforms of its own: they wait out their cache times side by side.
describe.concurrent('revocation within the registry cache time', () => {
  it("stops a disabled client's issued token on every route, and lets it work again once enabled", async () => {
    const platform = await newPlatform(ORG_A);
    const token = await edge.token({ client_id: 'client-disabled' });
    for (const [method, path, body] of everyRoute(platform))
      expect((await call(token, method, path, body)).status, path).toBe(200);

    const db = await edge.db();
    await db.prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind('client-disabled').run();
    await pastCacheTime();
    for (const [method, path, body] of everyRoute(platform)) {
      const res = await call(token, method, path, body);
      expect(res.status, path).toBe(401);
      expect(res.body).toEqual({
        error: 'invalid_token',
        error_description: 'the access token was revoked: its client is disabled or no longer registered',
      });
      expect(res.challenge).toMatch(/error="invalid_token"/);
    }

    await db.prepare('UPDATE api_clients SET disabled = 0 WHERE client_id = ?').bind('client-disabled').run();
    await pastCacheTime();
    expect((await call(token, 'GET', `/api/v2/PF4/${platform}/ServerTime`)).status).toBe(200);
  });

  it("stops a removed client's issued token on every route", async () => {
    const platform = await newPlatform(ORG_A);
    const token = await edge.token({ client_id: 'client-removed' });
    expect((await call(token, 'GET', '/api/Organizations')).status).toBe(200);
    await (await edge.db()).prepare('DELETE FROM api_clients WHERE client_id = ?').bind('client-removed').run();
    await pastCacheTime();
    for (const [method, path, body] of everyRoute(platform))
      expect((await call(token, method, path, body)).status, path).toBe(401);
  });

  it('takes a scope removed from the client away from its issued tokens', async () => {
    const platform = await newPlatform(ORG_A);
    const token = await edge.token({ client_id: 'client-narrowed', scope: ALL_SCOPES });
    const write = () =>
      call(token, 'POST', `/api/v2/PF4/${platform}/UserRecordNew`, { group: 'demo', name: 'Narrowed' });
    expect((await write()).body.error).toBeNull();
    await (await edge.db())
      .prepare("UPDATE api_clients SET scopes = 'webapi' WHERE client_id = ?")
      .bind('client-narrowed')
      .run();
    await pastCacheTime();
    expect((await write()).body.error).toMatchObject({ code: 'Forbidden' });
    expect((await call(token, 'GET', `/api/v2/PF4/${platform}/ServerTime`)).body.error).toBeNull();
  });

  it('answers a removed platform, and one moved to another organization, as unknown on every route', async () => {
    const token = await edge.token({ client_id: 'client-platforms' });
    const removed = await newPlatform(ORG_A);
    const moved = await newPlatform(ORG_A);
    for (const platform of [removed, moved]) {
      expect((await call(token, 'GET', `/api/v2/PF4/${platform}/ServerTime`)).body.error).toBeNull();
      expect((await call(token, 'GET', `/api/TradePlatforms/${platform}`)).status).toBe(200);
    }
    const db = await edge.db();
    await db.prepare('DELETE FROM trade_platforms WHERE id = ?').bind(removed).run();
    await db.prepare('UPDATE trade_platforms SET organization_id = ? WHERE id = ?').bind(ORG_B, moved).run();
    await pastCacheTime();
    for (const platform of [removed, moved]) {
      expect((await call(token, 'GET', `/api/v2/PF4/${platform}/ServerTime`)).body.error).toMatchObject({
        code: 'NotFound',
      });
      expect(
        (await call(token, 'POST', `/api/v2/PF4/${platform}/UserRecordNew`, { group: 'demo', name: 'Gone' })).body
          .error,
      ).toMatchObject({ code: 'NotFound' });
      expect((await call(token, 'GET', `/api/PF4/${platform}/UserRecordGet/5`)).status).toBe(404);
      expect((await call(token, 'GET', `/api/TradePlatforms/${platform}`)).status).toBe(404);
      const listed = (await call(token, 'GET', '/api/TradePlatforms')).body as Array<{ id: string }>;
      expect(listed.map((p) => p.id)).not.toContain(platform);
    }
    // The new owner's clients find the moved platform.
    const owner = await edge.token({ client_id: 'client-owner-b', org: ORG_B });
    expect((await call(owner, 'GET', `/api/v2/PF4/${moved}/ServerTime`)).body.error).toBeNull();
  });
});
