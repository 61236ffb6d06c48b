/**
 * The registry through the real worker (tenant-scoped routes) and the RegistryStore over the same D1 from Node
 * (the admin side the CLI uses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ORG_A, ORG_B, PF4_A, PF4_B, PF5_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { RegistryError, RegistryStore } from '../../workers/registry/registryStore.js';
import { verifySecret } from '../../shared/secrets.js';

let edge: TestEdge;
let store: RegistryStore;
let tokenA: string;
let tokenB: string;

beforeAll(async () => {
  edge = await startTestEdge();
  store = new RegistryStore(await edge.db());
  tokenA = await edge.token();
  tokenB = await edge.token({ client_id: 'client-b', org: ORG_B });
});
afterAll(async () => {
  await edge?.close();
});

async function get(path: string, token = tokenA) {
  const res = await fetch(new URL(path, edge.url), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('registry routes', () => {
  it("lists only the caller's organization's platforms, in the spec's record shape", async () => {
    const res = await get('/api/TradePlatforms');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/application\/json/);
    const platforms = JSON.parse(res.text) as Array<Record<string, unknown>>;
    expect(platforms.map((p) => [p.id, p.name, p.type, p.organizationId])).toEqual([
      [PF4_A, 'A PF4', 'PF4', ORG_A],
      [PF5_A, 'A PF5', 'PF5', ORG_A],
    ]);
    for (const p of platforms) {
      expect(Object.keys(p).sort()).toEqual(['created', 'id', 'name', 'organization', 'organizationId', 'type']);
      expect(p.created).toMatch(ISO);
      expect(p.organization).toEqual({ id: ORG_A, name: 'Org A', created: expect.stringMatching(ISO) });
    }
    const theirs = JSON.parse((await get('/api/TradePlatforms', tokenB)).text) as Array<{ id: string }>;
    expect(theirs.map((p) => p.id)).toEqual([PF4_B]);
  });

  it('reads one platform of the caller, accepting upper-case ids', async () => {
    const res = await get(`/api/TradePlatforms/${PF5_A}`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      id: PF5_A,
      name: 'A PF5',
      type: 'PF5',
      organizationId: ORG_A,
      organization: { id: ORG_A, name: 'Org A', created: expect.stringMatching(ISO) },
      created: expect.stringMatching(ISO),
    });
    expect(JSON.parse((await get(`/api/TradePlatforms/${PF5_A.toUpperCase()}`)).text).id).toBe(PF5_A);
  });

  it("answers another organization's platform exactly like an unknown one", async () => {
    const foreign = await get(`/api/TradePlatforms/${PF4_B}`);
    const unknownId = randomUUID();
    const unknown = await get(`/api/TradePlatforms/${unknownId}`);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text)).toEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${PF4_B} not found`,
    });
    expect(unknown.status).toBe(404);
    expect(foreign.type).toBe(unknown.type);
    expect(foreign.text.replace(PF4_B, 'ID')).toBe(unknown.text.replace(unknownId, 'ID'));
    // And the owner sees it.
    expect((await get(`/api/TradePlatforms/${PF4_B}`, tokenB)).status).toBe(200);
  });

  it('validates the platform id', async () => {
    for (const id of ['not-a-uuid', '1234', `${PF4_A}0`]) {
      const res = await get(`/api/TradePlatforms/${id}`);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text)).toEqual({
        errorType: 'Validation',
        errorCode: 'Validation',
        errorDescription: 'tradePlatform must be a uuid',
      });
    }
  });

  it("lists the caller's own organization only", async () => {
    expect(JSON.parse((await get('/api/Organizations')).text)).toEqual([
      { id: ORG_A, name: 'Org A', created: expect.stringMatching(ISO) },
    ]);
    expect(JSON.parse((await get('/api/Organizations', tokenB)).text)).toEqual([
      { id: ORG_B, name: 'Org B', created: expect.stringMatching(ISO) },
    ]);
  });

  it('needs a token', async () => {
    const res = await fetch(new URL('/api/TradePlatforms', edge.url));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="webapi"');
  });
});

describe('RegistryStore', () => {
  it('scopes platform lookups by organization', async () => {
    expect((await store.findPlatform(ORG_A, PF4_A))?.name).toBe('A PF4');
    expect(await store.findPlatform(ORG_A, PF4_B)).toBeNull();
    expect(await store.findPlatform(ORG_A, 'nope')).toBeNull();
    expect(await store.findPlatformEntry(ORG_B, PF4_B)).toEqual({
      platform: expect.objectContaining({ id: PF4_B, type: 'PF4' }),
      brokerUrls: null,
      homeRegion: null,
      jurisdiction: null,
    });
    expect(await store.listOrganizations(randomUUID())).toEqual([]);
  });

  it('adds and removes organizations, platforms and clients, refusing to orphan anything', async () => {
    const org = await store.addOrganization({ name: 'Acme' });
    expect(org).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme',
      created: expect.stringMatching(ISO),
      jurisdiction: null,
    });
    const { jurisdiction: _jurisdiction, ...publicOrg } = org;
    await expect(store.addOrganization({ name: 'Again', id: org.id })).rejects.toThrow(
      `organization ${org.id} already exists`,
    );
    await expect(store.addOrganization({ name: 'Bad', id: 'x' })).rejects.toBeInstanceOf(RegistryError);

    const id = randomUUID();
    const entry = await store.addPlatform({
      organizationId: org.id,
      type: 'PFOther',
      name: 'Acme other',
      id,
      brokerUrls: ['http://127.0.0.1:9999'],
    });
    expect(entry).toEqual({
      platform: expect.objectContaining({ id, type: 'PFOther', organization: publicOrg }),
      brokerUrls: ['http://127.0.0.1:9999'],
      homeRegion: null,
      jurisdiction: null,
    });
    await expect(store.addPlatform({ organizationId: randomUUID(), type: 'PF4', name: 'x' })).rejects.toThrow(
      /organization .* not found/,
    );
    await expect(store.addPlatform({ organizationId: org.id, type: 'PF6' as 'PF4', name: 'x' })).rejects.toThrow(
      /PF4, PF5, PFOther/,
    );

    const { client, secret } = await store.addClient({
      organizationId: org.id,
      name: 'Acme app',
      clientId: 'acme-app',
    });
    expect(client).toEqual({
      clientId: 'acme-app',
      organizationId: org.id,
      name: 'Acme app',
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: ['webapi'],
      allowedNetworks: [],
      created: expect.stringMatching(ISO),
    });
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(store.addClient({ organizationId: org.id, clientId: 'has:colon' })).rejects.toThrow(
      /client id must be/,
    );
    await expect(store.addClient({ organizationId: org.id, clientId: 'acme-app' })).rejects.toThrow(/already exists/);

    const stored = await store.findClient('acme-app');
    expect(await verifySecret(secret, stored!.secret)).toBe(true);
    expect(JSON.stringify(await store.listClients(org.id))).not.toMatch(/hash|salt/);
    expect((await store.setClientDisabled('acme-app', true)).disabled).toBe(true);
    expect((await store.findClient('acme-app'))!.disabled).toBe(true);

    await expect(store.removeOrganization(org.id)).rejects.toThrow(
      'still has 1 platform(s), 1 client(s) and 0 webhook endpoint(s)',
    );
    expect((await store.removePlatform(id)).platform.id).toBe(id);
    await expect(store.removePlatform(id)).rejects.toThrow(`platform ${id} not found`);
    expect((await store.removeClient('acme-app')).clientId).toBe('acme-app');
    expect(await store.removeOrganization(org.id)).toEqual(org);
    expect(await store.findOrganization(org.id)).toBeNull();
  });
});
