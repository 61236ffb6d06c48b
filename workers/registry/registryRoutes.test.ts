/**
 * The registry routes (TradePlatforms, TradePlatform, Organizations) run in this process over a real D1 registry,
 * behind a stand-in for requireToken() that sets the caller: organization isolation, the v1 error bodies, the time
 * budget, and the registry cache time of platform look-ups (REGISTRY_CACHE_SECONDS).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { AppEnv, Caller, Env } from '../env.js';
import { callerOf, platformOf, registryRoutes } from './registryRoutes.js';
import { RegistryStore } from './registryStore.js';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';

let registry: RegistryDb;
let store: RegistryStore;
let orgA: { id: string; name: string | null; created: string };
let orgB: { id: string; name: string | null; created: string };

beforeAll(async () => {
  registry = await startRegistryDb();
  store = new RegistryStore(registry.db);
  // Seeded with SQL rather than the store, so the store's own code runs inside the tests only.
  orgA = { id: randomUUID(), name: 'Org A', created: '2026-01-01T00:00:00.000Z' };
  orgB = { id: randomUUID(), name: 'Org B', created: '2026-01-02T00:00:00.000Z' };
  for (const org of [orgA, orgB]) {
    await registry.db
      .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(org.id, org.name, org.created)
      .run();
  }
}, 60_000);
afterAll(async () => {
  await registry?.close();
});

/** The routes as /api/* mounts them, for a caller of `organizationId` (none: requireToken() missing). */
function app(organizationId: string | null, vars: Partial<Env> = {}) {
  const a = new Hono<AppEnv>();
  a.use('*', async (c, next) => {
    if (organizationId) c.set('caller', { clientId: 'client-a', organizationId, scopes: ['webapi'] } satisfies Caller);
    await next();
  });
  a.route('/', registryRoutes());
  a.get('/probe/:id', async (c) => c.json(await platformOf(c, c.req.param('id'))));
  a.onError((error, c) => c.json({ thrown: error.message }, 500));
  return (path: string, headers: Record<string, string> = {}) =>
    a.request(path, { headers }, { DB: registry.db, ...vars });
}

describe('registry routes', () => {
  it("list only the caller's organization's platforms, and the caller's organization alone", async () => {
    const mine = await store.addPlatform({ organizationId: orgA.id, type: 'PF4', name: 'A one' });
    await store.addPlatform({ organizationId: orgB.id, type: 'PF5', name: 'B one' });
    const asA = app(orgA.id);
    const list = await asA('/api/TradePlatforms');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-request-timeout-applied')).toBe('10');
    expect(await list.json()).toEqual([mine.platform]);
    const orgs = await asA('/api/Organizations');
    expect(orgs.status).toBe(200);
    expect(orgs.headers.get('x-request-timeout-applied')).toBe('10');
    expect(await orgs.json()).toEqual([orgA]);
    expect(await (await app(randomUUID())('/api/Organizations')).json()).toEqual([]);
  });

  it("read one platform of the caller's organization, and answer a foreign one exactly like an unknown one", async () => {
    const mine = await store.addPlatform({
      organizationId: orgA.id,
      type: 'PF5',
      name: 'Read me',
      brokerUrls: ['http://127.0.0.1:9200', 'http://127.0.0.1:9201'],
    });
    const foreign = await store.addPlatform({ organizationId: orgB.id, type: 'PF4', name: 'Not yours' });
    const asA = app(orgA.id);
    const found = await asA(`/api/TradePlatforms/${mine.platform.id}`);
    expect(found.status).toBe(200);
    // The brokers it is served by are for routing only, never in the answer.
    expect(await found.json()).toEqual(mine.platform);

    const unknownId = randomUUID();
    const other = await asA(`/api/TradePlatforms/${foreign.platform.id}`);
    const unknown = await asA(`/api/TradePlatforms/${unknownId}`);
    expect([other.status, unknown.status]).toEqual([404, 404]);
    expect(await other.json()).toEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${foreign.platform.id} not found`,
    });
    expect(await unknown.json()).toEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${unknownId} not found`,
    });
  });

  it('refuse a platform id that is not a uuid as a Validation error', async () => {
    const res = await app(orgA.id)('/api/TradePlatforms/platform-1');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: 'tradePlatform must be a uuid',
    });
  });

  it('take the time budget from the header or the query and refuse one out of range', async () => {
    const asA = app(orgA.id);
    expect(
      (await asA('/api/TradePlatforms', { 'X-Request-Timeout': '42' })).headers.get('x-request-timeout-applied'),
    ).toBe('42');
    expect((await asA('/api/Organizations?requestTimeout=7')).headers.get('x-request-timeout-applied')).toBe('7');
    const bad = await asA(`/api/TradePlatforms/${randomUUID()}`, { 'X-Request-Timeout': '301' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-request-timeout-applied')).toBe('10');
    expect(await bad.json()).toEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: 'X-Request-Timeout: must be a number of seconds from 1 to 300',
    });
    const badQuery = await asA('/api/Organizations?requestTimeout=0');
    expect(badQuery.status).toBe(400);
    expect(await badQuery.json()).toMatchObject({
      errorDescription: 'requestTimeout: must be a number of seconds from 1 to 300',
    });
  });

  it('fail loudly when reached without a verified caller', async () => {
    const res = await app(null)('/api/TradePlatforms');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      thrown: 'registry route reached without a verified caller: mount requireToken() on /api/*',
    });
    expect(() => callerOf({ get: () => undefined } as never)).toThrow(/mount requireToken\(\)/);
  });
});

describe('platform look-up cache time', () => {
  it('remembers a platform for REGISTRY_CACHE_SECONDS (default 5), so a removal shows once it has passed', async () => {
    const cases: [Partial<Env>, number][] = [
      [{}, 5],
      [{ REGISTRY_CACHE_SECONDS: '30' }, 30],
      [{ REGISTRY_CACHE_SECONDS: 'soon' }, 5],
    ];
    for (const [vars, seconds] of cases) {
      const t0 = Date.now();
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(t0);
        const entry = await store.addPlatform({ organizationId: orgA.id, type: 'PF4', name: 'Cached' });
        const probe = app(orgA.id, vars);
        expect(await (await probe(`/probe/${entry.platform.id}`)).json()).toEqual(entry);
        await store.removePlatform(entry.platform.id);
        // Still answered from this isolate's memory within the cache time, not after it.
        vi.setSystemTime(t0 + seconds * 1000 - 1);
        expect(await (await probe(`/probe/${entry.platform.id}`)).json()).toEqual(entry);
        vi.setSystemTime(t0 + seconds * 1000);
        expect(await (await probe(`/probe/${entry.platform.id}`)).json()).toBeNull();
      } finally {
        vi.useRealTimers();
      }
    }
  });

  it('reads the registry on every call with REGISTRY_CACHE_SECONDS=0', async () => {
    const entry = await store.addPlatform({ organizationId: orgA.id, type: 'PF4', name: 'Uncached' });
    const probe = app(orgA.id, { REGISTRY_CACHE_SECONDS: '0' });
    expect(await (await probe(`/probe/${entry.platform.id}`)).json()).toEqual(entry);
    await store.removePlatform(entry.platform.id);
    expect(await (await probe(`/probe/${entry.platform.id}`)).json()).toBeNull();
  });

  it('never answers another organization from an entry read for its owner', async () => {
    const entry = await store.addPlatform({ organizationId: orgA.id, type: 'PF5', name: 'Owned' });
    expect(await (await app(orgA.id, { REGISTRY_CACHE_SECONDS: '60' })(`/probe/${entry.platform.id}`)).json()).toEqual(
      entry,
    );
    expect(
      await (await app(orgB.id, { REGISTRY_CACHE_SECONDS: '60' })(`/probe/${entry.platform.id}`)).json(),
    ).toBeNull();
    const res = await app(orgB.id, { REGISTRY_CACHE_SECONDS: '60' })(`/api/TradePlatforms/${entry.platform.id}`);
    expect(res.status).toBe(404);
  });
});
