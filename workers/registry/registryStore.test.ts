/**
 * The registry store over a real (in-memory) D1 database: what the edge's reads scoped to an organization answer, and
 * what the administration writes store and refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RegistryError, RegistryStore } from './registryStore.js';
import { verifySecret } from '../../shared/secrets.js';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';
import { applyMigrations } from '../../launcher/edge.js';
import { REGISTRY_MIGRATIONS } from './migrationNames.js';

let registry: RegistryDb;
let store: RegistryStore;

const ORG_A = randomUUID();
const ORG_B = randomUUID();
const [P1, P2, P3] = [randomUUID(), randomUUID(), randomUUID()];

beforeAll(async () => {
  registry = await startRegistryDb();
  store = new RegistryStore(registry.db);
  const db = registry.db;
  await db.batch([
    db
      .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(ORG_A, 'Org A', '2026-01-01T00:00:00.000Z'),
    db
      .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(ORG_B, null, '2025-12-01T00:00:00.000Z'),
    // Listed by created, then id: P2 is older than P1. Written as a previous version wrote them: broker_url alone.
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(P1, 'Main PF4', 'PF4', ORG_A, 'http://127.0.0.1:9100', '2026-01-03T00:00:00.000Z'),
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(P2, null, 'PF5', ORG_A, null, '2026-01-02T00:00:00.000Z'),
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(P3, 'B platform', 'PFOther', ORG_B, null, '2026-01-01T00:00:00.000Z'),
    db
      .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, grant_types, scopes, created)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind(
        'reader',
        ORG_A,
        'Reader',
        'h1',
        's1',
        7,
        0,
        'client_credentials',
        'webapi webapi.future',
        '2026-01-05T00:00:00.000Z',
      ),
    db
      .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, grant_types, scopes, created)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind(
        'admin',
        ORG_A,
        null,
        'h2',
        's2',
        9,
        1,
        'client_credentials  refresh_token',
        'webapi.admin webapi webapi.write',
        '2026-01-04T00:00:00.000Z',
      ),
    db
      .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, grant_types, scopes, created)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind('b-client', ORG_B, 'B', 'h3', 's3', 1, 0, '', 'webapi', '2026-01-04T00:00:00.000Z'),
  ]);
}, 60_000);
afterAll(async () => {
  await registry?.close();
});

const orgA = { id: ORG_A, name: 'Org A', created: '2026-01-01T00:00:00.000Z' };
const orgB = { id: ORG_B, name: null, created: '2025-12-01T00:00:00.000Z' };
const p1 = {
  id: P1,
  name: 'Main PF4',
  type: 'PF4',
  organizationId: ORG_A,
  organization: orgA,
  created: '2026-01-03T00:00:00.000Z',
};
const p2 = {
  id: P2,
  name: null,
  type: 'PF5',
  organizationId: ORG_A,
  organization: orgA,
  created: '2026-01-02T00:00:00.000Z',
};
const p3 = {
  id: P3,
  name: 'B platform',
  type: 'PFOther',
  organizationId: ORG_B,
  organization: orgB,
  created: '2026-01-01T00:00:00.000Z',
};

/** The two broker columns of a platform's row as stored. */
const columns = (id: string) =>
  registry.db
    .prepare('SELECT broker_urls, broker_url FROM trade_platforms WHERE id = ?')
    .bind(id)
    .first<{ broker_urls: string | null; broker_url: string | null }>();

/** The region columns as stored: the platform's home and its organization's jurisdiction. */
const regionColumns = (id: string) =>
  registry.db
    .prepare(
      'SELECT p.home_region, o.jurisdiction FROM trade_platforms p JOIN organizations o ON o.id = p.organization_id WHERE p.id = ?',
    )
    .bind(id)
    .first<{ home_region: string | null; jurisdiction: string | null }>();

async function refusal(promise: Promise<unknown>): Promise<{ kind: string; message: string; name: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RegistryError);
  const { kind, message, name } = error as RegistryError;
  return { kind, message, name };
}

/** What the registry says of a platform's placement when its row and organization name none. */
const UNPLACED = { homeRegion: null, jurisdiction: null };

describe("reads scoped to the caller's organization", () => {
  it('find a platform of the organization with its brokers, under any spelling of the ids', async () => {
    expect(await store.findPlatformEntry(ORG_A, P1)).toEqual({
      platform: p1,
      brokerUrls: ['http://127.0.0.1:9100'],
      ...UNPLACED,
    });
    expect(await store.findPlatformEntry(ORG_A.toUpperCase(), P2.toUpperCase())).toEqual({
      platform: p2,
      brokerUrls: null,
      ...UNPLACED,
    });
    expect(await store.findPlatform(ORG_B, P3)).toEqual(p3);
  });

  it("answer another organization's platform, an unknown one and a malformed id alike: null", async () => {
    expect(await store.findPlatformEntry(ORG_B, P1)).toBeNull();
    expect(await store.findPlatform(ORG_B, P1)).toBeNull();
    expect(await store.findPlatformEntry(ORG_A, randomUUID())).toBeNull();
    expect(await store.findPlatformEntry(ORG_A, `${P1}'`)).toBeNull();
    expect(await store.findPlatformEntry(`${ORG_A} OR 1=1`, P1)).toBeNull();
    expect(await store.findPlatformEntry('', P1)).toBeNull();
  });

  it("list the organization's platforms only, oldest first", async () => {
    expect(await store.listPlatforms(ORG_A)).toEqual([p2, p1]);
    expect(await store.listPlatforms(ORG_A.toUpperCase())).toEqual([p2, p1]);
    expect(await store.listPlatforms(ORG_B)).toEqual([p3]);
    expect(await store.listPlatforms(randomUUID())).toEqual([]);
  });

  it("list the caller's own organization alone", async () => {
    expect(await store.listOrganizations(ORG_A)).toEqual([orgA]);
    expect(await store.listOrganizations(ORG_B.toUpperCase())).toEqual([orgB]);
    expect(await store.listOrganizations(randomUUID())).toEqual([]);
    expect(await store.findOrganization('not-a-uuid')).toBeNull();
  });

  it('read a client with its secret parameters, grants and known scopes, in SCOPES order', async () => {
    expect(await store.findClient('reader')).toEqual({
      clientId: 'reader',
      organizationId: ORG_A,
      name: 'Reader',
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: ['webapi'],
      allowedNetworks: [],
      created: '2026-01-05T00:00:00.000Z',
      secret: { hash: 'h1', salt: 's1', iterations: 7 },
    });
    expect(await store.findClient('admin')).toMatchObject({
      name: null,
      disabled: true,
      grantTypes: ['client_credentials', 'refresh_token'],
      scopes: ['webapi', 'webapi.write', 'webapi.admin'],
    });
    expect(await store.findClient('b-client')).toMatchObject({ grantTypes: [], organizationId: ORG_B });
    expect(await store.findClient('nobody')).toBeNull();
  });

  it("read a client's standing for the token check", async () => {
    expect(await store.findClientStanding('reader')).toEqual({
      clientId: 'reader',
      organizationId: ORG_A,
      disabled: false,
      scopes: ['webapi'],
      allowedNetworks: [],
    });
    expect(await store.findClientStanding('admin')).toEqual({
      clientId: 'admin',
      organizationId: ORG_A,
      disabled: true,
      scopes: ['webapi', 'webapi.write', 'webapi.admin'],
      allowedNetworks: [],
    });
    expect(await store.findClientStanding('nobody')).toBeNull();
  });

  it('read the standings of several clients at once, the unknown ones absent, past 100 ids a query', async () => {
    const ids = ['reader', 'nobody', ...Array.from({ length: 150 }, (_, i) => `missing-${i}`), 'admin'];
    const standings = await store.findClientStandings(ids);
    expect([...standings.keys()].sort()).toEqual(['admin', 'reader']);
    expect(standings.get('reader')).toEqual(await store.findClientStanding('reader'));
    expect(standings.get('admin')).toEqual(await store.findClientStanding('admin'));
    expect((await store.findClientStandings([])).size).toBe(0);
  });
});

describe('administration reads', () => {
  it("list every organization and platform, oldest first, or one organization's", async () => {
    const orgs = await store.allOrganizations();
    expect(orgs.filter((o) => o.id === ORG_A || o.id === ORG_B)).toEqual([
      { ...orgB, jurisdiction: null },
      { ...orgA, jurisdiction: null },
    ]);
    const all = (await store.allPlatforms()).filter((e) => ([P1, P2, P3] as string[]).includes(e.platform.id));
    expect(all.map((e) => e.platform)).toEqual([p3, p2, p1]);
    expect(all.map((e) => e.brokerUrls)).toEqual([null, null, ['http://127.0.0.1:9100']]);
    expect((await store.allPlatforms(ORG_A.toUpperCase())).map((e) => e.platform.id)).toEqual([P2, P1]);
    expect(await store.findAnyPlatform(P3.toUpperCase())).toEqual({ platform: p3, brokerUrls: null, ...UNPLACED });
    expect(await store.findAnyPlatform(randomUUID())).toBeNull();
    expect(await store.findAnyPlatform('P3')).toBeNull();
  });

  it("list clients without their secrets, oldest first, or one organization's", async () => {
    const mine = await store.listClients(ORG_A.toUpperCase());
    expect(mine.map((c) => c.clientId)).toEqual(['admin', 'reader']);
    expect(mine[1]).toEqual({
      clientId: 'reader',
      organizationId: ORG_A,
      name: 'Reader',
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: ['webapi'],
      allowedNetworks: [],
      created: '2026-01-05T00:00:00.000Z',
    });
    const all = (await store.listClients()).filter((c) => ['reader', 'admin', 'b-client'].includes(c.clientId));
    expect(all.map((c) => c.clientId)).toEqual(['admin', 'b-client', 'reader']);
  });
});

describe('administration writes', () => {
  it('add an organization under a lower-cased or new uuid, refusing a malformed or taken one', async () => {
    const id = randomUUID();
    const org = await store.addOrganization({ name: 'New', id: id.toUpperCase() });
    expect(org).toMatchObject({ id, name: 'New' });
    expect(Date.parse(org.created)).not.toBeNaN();
    // Administration sees the jurisdiction; the edge's public record is id, name and created alone.
    const { jurisdiction, ...publicOrg } = org;
    expect(jurisdiction).toBeNull();
    expect(await store.findOrganization(id)).toStrictEqual(publicOrg);
    expect(await store.findAdminOrganization(id)).toStrictEqual(org);
    const fresh = await store.addOrganization({ name: 'Fresh' });
    expect(await store.findAdminOrganization(fresh.id)).toEqual(fresh);
    expect(await refusal(store.addOrganization({ name: 'x', id: 'org-1' }))).toEqual({
      kind: 'invalid',
      message: 'organization id org-1 is not a uuid',
      name: 'RegistryError',
    });
    expect(await refusal(store.addOrganization({ name: 'x', id }))).toEqual({
      kind: 'conflict',
      message: `organization ${id} already exists`,
      name: 'RegistryError',
    });
  });

  it('remove an organization only once it has no platforms or clients', async () => {
    const org = await store.addOrganization({ name: 'Short-lived' });
    const platform = await store.addPlatform({ organizationId: org.id, type: 'PF4', name: 'p' });
    expect(await refusal(store.removeOrganization(org.id))).toMatchObject({
      kind: 'conflict',
      message: `organization ${org.id} still has 1 platform(s), 0 client(s) and 0 webhook endpoint(s); remove them first`,
    });
    await store.removePlatform(platform.platform.id);
    const { client } = await store.addClient({ organizationId: org.id });
    expect(await refusal(store.removeOrganization(org.id))).toMatchObject({
      kind: 'conflict',
      message: `organization ${org.id} still has 0 platform(s), 1 client(s) and 0 webhook endpoint(s); remove them first`,
    });
    await store.removeClient(client.clientId);
    expect(await store.removeOrganization(org.id.toUpperCase())).toEqual(org);
    expect(await store.findOrganization(org.id)).toBeNull();
    expect(await refusal(store.removeOrganization(org.id))).toMatchObject({
      kind: 'not_found',
      message: `organization ${org.id} not found`,
    });
  });

  it('add a platform to an existing organization and read it back', async () => {
    const id = randomUUID();
    const entry = await store.addPlatform({
      organizationId: ORG_B.toUpperCase(),
      type: 'PF5',
      name: 'Added',
      id: id.toUpperCase(),
      brokerUrls: ['https://broker-b.example', 'https://broker-a.example'],
    });
    expect(entry.platform).toMatchObject({ id, name: 'Added', type: 'PF5', organizationId: ORG_B, organization: orgB });
    expect(entry.brokerUrls).toEqual(['https://broker-b.example', 'https://broker-a.example']);
    expect(await store.findPlatformEntry(ORG_B, id)).toEqual(entry);
    // The list as JSON text, and its first entry where a previous version's edge reads its one broker.
    expect(await columns(id)).toEqual({
      broker_urls: '["https://broker-b.example","https://broker-a.example"]',
      broker_url: 'https://broker-b.example',
    });
    const plain = await store.addPlatform({ organizationId: ORG_B, type: 'PF4', name: 'Plain' });
    expect(plain.brokerUrls).toBeNull();
    expect(await columns(plain.platform.id)).toEqual({ broker_urls: null, broker_url: null });
    expect(await store.findPlatformEntry(ORG_B, plain.platform.id)).toEqual(plain);
    expect(await store.removePlatform(id)).toEqual(entry);
    expect(await store.findAnyPlatform(id)).toBeNull();
    await store.removePlatform(plain.platform.id);
  });

  it("replace a platform's brokers, in order, or hand it back to the default list", async () => {
    const { platform } = await store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'Paired' });
    const paired = await store.setPlatformBrokers(platform.id.toUpperCase(), [
      'http://127.0.0.1:9301',
      'http://127.0.0.1:9302/',
    ]);
    expect(paired).toEqual({
      platform,
      brokerUrls: ['http://127.0.0.1:9301', 'http://127.0.0.1:9302/'],
      ...UNPLACED,
    });
    expect(await store.findPlatformEntry(ORG_A, platform.id)).toEqual(paired);
    expect(await columns(platform.id)).toEqual({
      broker_urls: '["http://127.0.0.1:9301","http://127.0.0.1:9302/"]',
      broker_url: 'http://127.0.0.1:9301',
    });
    const swapped = await store.setPlatformBrokers(platform.id, ['http://127.0.0.1:9302/', 'http://127.0.0.1:9301']);
    expect((await store.findAnyPlatform(platform.id))!.brokerUrls).toEqual(swapped.brokerUrls);
    expect(await columns(platform.id)).toMatchObject({ broker_url: 'http://127.0.0.1:9302/' });
    expect(await store.setPlatformBrokers(platform.id, null)).toEqual({ platform, brokerUrls: null, ...UNPLACED });
    expect(await columns(platform.id)).toEqual({ broker_urls: null, broker_url: null });
    const unknown = randomUUID();
    expect(await refusal(store.setPlatformBrokers(unknown, ['http://127.0.0.1:9301']))).toMatchObject({
      kind: 'not_found',
      message: `platform ${unknown} not found`,
    });
    await store.removePlatform(platform.id);
  });

  it('refuse a broker list that is empty, too long, repeated or not of http(s) URLs, naming the field and the rule', async () => {
    const { platform } = await store.addPlatform({
      organizationId: ORG_A,
      type: 'PF4',
      name: 'Strict',
      brokerUrls: ['http://127.0.0.1:9401'],
    });
    const nine = Array.from({ length: 9 }, (_, i) => `http://127.0.0.1:${9500 + i}`);
    const cases: Array<[string[], string]> = [
      [[], 'brokerUrls must name at least one broker URL'],
      [nine, 'brokerUrls must name at most 8 broker URLs'],
      [['http://127.0.0.1:9401', 'http://127.0.0.1:9401/'], 'brokerUrls names http://127.0.0.1:9401/ twice'],
      [
        ['ws://127.0.0.1:9401'],
        'brokerUrls must be absolute http(s) URLs separated by commas; not one: ws://127.0.0.1:9401',
      ],
      [['127.0.0.1:9401'], 'brokerUrls must be absolute http(s) URLs separated by commas; not one: 127.0.0.1:9401'],
    ];
    for (const [urls, message] of cases) {
      expect(await refusal(store.setPlatformBrokers(platform.id, urls))).toEqual({
        kind: 'invalid',
        message,
        name: 'RegistryError',
      });
      expect(
        await refusal(store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'x', brokerUrls: urls })),
      ).toEqual({ kind: 'invalid', message, name: 'RegistryError' });
    }
    expect(await refusal(store.setPlatformBrokers(platform.id, [42 as never]))).toMatchObject({
      kind: 'invalid',
      message: 'brokerUrls must be a list of http(s) URLs',
    });
    // Nothing was changed or added by the refused writes.
    expect((await store.findAnyPlatform(platform.id))!.brokerUrls).toEqual(['http://127.0.0.1:9401']);
    expect((await store.allPlatforms(ORG_A)).filter((e) => e.platform.name === 'x')).toEqual([]);
    await store.removePlatform(platform.id);
  });

  it('read a damaged list as the one broker broker_url names, or the default list without one', async () => {
    const { platform } = await store.addPlatform({
      organizationId: ORG_A,
      type: 'PF4',
      name: 'Damaged',
      brokerUrls: ['http://127.0.0.1:9601', 'http://127.0.0.1:9602'],
    });
    const damage = (text: string, first: string | null) =>
      registry.db
        .prepare('UPDATE trade_platforms SET broker_urls = ?, broker_url = ? WHERE id = ?')
        .bind(text, first, platform.id)
        .run();
    await damage('["http://127.0.0.1:9601",', 'http://127.0.0.1:9601');
    expect((await store.findAnyPlatform(platform.id))!.brokerUrls).toEqual(['http://127.0.0.1:9601']);
    await damage('{"first":"http://127.0.0.1:9601"}', null);
    expect((await store.findAnyPlatform(platform.id))!.brokerUrls).toBeNull();
    await damage('[]', null);
    expect((await store.findAnyPlatform(platform.id))!.brokerUrls).toBeNull();
    await store.removePlatform(platform.id);
  });

  it('refuse a platform with a malformed id, an unknown type or organization, or a taken id', async () => {
    expect(
      await refusal(store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'x', id: 'p-1' })),
    ).toMatchObject({ kind: 'invalid', message: 'platform id p-1 is not a uuid' });
    expect(await refusal(store.addPlatform({ organizationId: ORG_A, type: 'MT9' as never, name: 'x' }))).toMatchObject({
      kind: 'invalid',
      message: 'platform type must be one of PF4, PF5, PFOther',
    });
    const stranger = randomUUID();
    expect(await refusal(store.addPlatform({ organizationId: stranger, type: 'PF4', name: 'x' }))).toMatchObject({
      kind: 'not_found',
      message: `organization ${stranger} not found`,
    });
    // Taken by another organization's platform too: ids are global.
    expect(await refusal(store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'x', id: P3 }))).toMatchObject({
      kind: 'conflict',
      message: `platform ${P3} already exists`,
    });
    const unknown = randomUUID();
    expect(await refusal(store.removePlatform(unknown))).toMatchObject({
      kind: 'not_found',
      message: `platform ${unknown} not found`,
    });
  });

  it('register a client with a secret only its hash keeps, webapi alone unless given scopes', async () => {
    const { client, secret } = await store.addClient({
      organizationId: ORG_A.toUpperCase(),
      name: 'Bot',
      clientId: 'bot.1',
    });
    expect(client).toMatchObject({
      clientId: 'bot.1',
      organizationId: ORG_A,
      name: 'Bot',
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: ['webapi'],
    });
    const stored = (await store.findClient('bot.1'))!;
    const { secret: hash, ...listed } = stored;
    expect(listed).toEqual(client);
    expect(hash.hash).not.toContain(secret);
    expect(await verifySecret(secret, hash)).toBe(true);
    expect(await verifySecret(`${secret}x`, hash)).toBe(false);

    const scoped = await store.addClient({ organizationId: ORG_A, scopes: ['webapi.admin', 'webapi.write'] });
    expect(scoped.client.clientId).toMatch(/^client-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(scoped.client.name).toBeNull();
    expect(scoped.client.scopes).toEqual(['webapi', 'webapi.write', 'webapi.admin']);
    expect((await store.findClientStanding(scoped.client.clientId))!.scopes).toEqual([
      'webapi',
      'webapi.write',
      'webapi.admin',
    ]);
  });

  it('refuse a client with a malformed or taken id, an unknown organization or scope', async () => {
    expect(await refusal(store.addClient({ organizationId: ORG_A, clientId: 'has space' }))).toMatchObject({
      kind: 'invalid',
      message: 'client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -',
    });
    expect(await refusal(store.addClient({ organizationId: ORG_A, clientId: 'x'.repeat(129) }))).toMatchObject({
      kind: 'invalid',
    });
    const stranger = randomUUID();
    expect(await refusal(store.addClient({ organizationId: stranger }))).toMatchObject({
      kind: 'not_found',
      message: `organization ${stranger} not found`,
    });
    expect(await refusal(store.addClient({ organizationId: ORG_A, scopes: ['webapi.root'] }))).toMatchObject({
      kind: 'invalid',
      message:
        'unknown scope webapi.root: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
    });
    expect(await refusal(store.addClient({ organizationId: ORG_B, clientId: 'reader' }))).toMatchObject({
      kind: 'conflict',
      message: 'client reader already exists',
    });
  });

  it("set a client's allowed networks, canonical and each once, and find it only within its organization", async () => {
    const { client } = await store.addClient({
      organizationId: ORG_A,
      clientId: 'office',
      allowedNetworks: ['198.51.100.7', '2001:DB8::/32'],
    });
    expect(client.allowedNetworks).toEqual(['198.51.100.7/32', '2001:db8::/32']);
    expect((await store.findClientStanding('office'))!.allowedNetworks).toEqual(['198.51.100.7/32', '2001:db8::/32']);
    expect(await store.setClientNetworks('office', ['203.0.113.0/24', '203.0.113.0/24', '10.0.0.0/8'])).toEqual({
      ...client,
      allowedNetworks: ['203.0.113.0/24', '10.0.0.0/8'],
    });
    expect((await store.findClient('office'))!.allowedNetworks).toEqual(['203.0.113.0/24', '10.0.0.0/8']);
    expect((await store.listClients(ORG_A)).find((c) => c.clientId === 'office')!.allowedNetworks).toEqual([
      '203.0.113.0/24',
      '10.0.0.0/8',
    ]);

    // Refused whole: nothing of a list with one bad entry is stored.
    expect(await refusal(store.setClientNetworks('office', ['10.0.0.0/8', '203.0.113.5/24']))).toMatchObject({
      kind: 'invalid',
      message: '203.0.113.5/24 has bits set past its /24 prefix: the network is 203.0.113.0/24',
    });
    const tooMany = Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`);
    expect(await refusal(store.setClientNetworks('office', tooMany))).toMatchObject({
      kind: 'invalid',
      message: 'a client may have at most 64 allowed networks, not 65',
    });
    expect(
      await refusal(store.addClient({ organizationId: ORG_A, allowedNetworks: ['office.example'] })),
    ).toMatchObject({ kind: 'invalid', message: 'office.example is not an IP address or a network in CIDR notation' });
    expect((await store.findClient('office'))!.allowedNetworks).toEqual(['203.0.113.0/24', '10.0.0.0/8']);

    // Within an organization (the admin API): another organization's client is not found, exactly as an unknown one.
    expect(await store.findOrganizationClient(ORG_A, 'office')).toEqual({
      ...client,
      allowedNetworks: ['203.0.113.0/24', '10.0.0.0/8'],
    });
    expect(await store.findOrganizationClient(ORG_B, 'office')).toBeNull();
    for (const other of [
      () => store.setClientNetworks('office', [], ORG_B),
      () => store.setClientNetworks('nobody', [], ORG_A),
    ])
      expect(await refusal(other())).toMatchObject({ kind: 'not_found' });
    expect(await store.setClientNetworks('office', [], ORG_A)).toMatchObject({ allowedNetworks: [] });
    expect((await store.findClientStanding('office'))!.allowedNetworks).toEqual([]);
    await store.removeClient('office');
  });

  it('narrow, disable and remove a client, answering it without secret material', async () => {
    const { client } = await store.addClient({ organizationId: ORG_A, clientId: 'changing', scopes: ['webapi.write'] });
    expect(await store.setClientScopes('changing', ['webapi.admin'])).toEqual({
      ...client,
      scopes: ['webapi', 'webapi.admin'],
    });
    expect((await store.findClientStanding('changing'))!.scopes).toEqual(['webapi', 'webapi.admin']);
    expect(await refusal(store.setClientScopes('changing', ['nope']))).toMatchObject({ kind: 'invalid' });

    expect(await store.setClientDisabled('changing', true)).toEqual({
      ...client,
      scopes: ['webapi', 'webapi.admin'],
      disabled: true,
    });
    expect((await store.findClientStanding('changing'))!.disabled).toBe(true);
    expect(await store.setClientDisabled('changing', false)).toMatchObject({ disabled: false });
    expect((await store.findClientStanding('changing'))!.disabled).toBe(false);

    const removed = await store.removeClient('changing');
    expect(removed).toEqual({ ...client, scopes: ['webapi', 'webapi.admin'] });
    expect(removed).not.toHaveProperty('secret');
    expect(await store.findClient('changing')).toBeNull();
    // Each started only when it is awaited: a refusal made before its turn would be an unhandled rejection.
    for (const change of [
      () => store.setClientScopes('gone', ['webapi']),
      () => store.setClientDisabled('gone', true),
      () => store.removeClient('gone'),
    ]) {
      expect(await refusal(change())).toMatchObject({ kind: 'not_found', message: 'client gone not found' });
    }
  });
});

/** Drops every table of `db`, the newest first, foreign keys checked only at the end of the batch. */
async function dropAllTables(db: RegistryDb['db']): Promise<void> {
  const tables = await db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid DESC",
    )
    .all<{ name: string }>();
  await db.batch([
    db.prepare('PRAGMA defer_foreign_keys = true'),
    ...tables.results.map((t) => db.prepare(`DROP TABLE "${t.name}"`)),
  ]);
}

describe('regions (docs/regions.md)', () => {
  it("keep a platform's home region, checked, and hand it back to the edge's default", async () => {
    const entry = await store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'Homed', homeRegion: 'apac' });
    expect(entry).toMatchObject({ homeRegion: 'apac', jurisdiction: null });
    expect(await regionColumns(entry.platform.id)).toStrictEqual({ home_region: 'apac', jurisdiction: null });
    expect(await store.findPlatformEntry(ORG_A, entry.platform.id)).toEqual(entry);
    // The public record carries neither.
    expect(await store.findPlatform(ORG_A, entry.platform.id)).toStrictEqual(entry.platform);
    expect(await store.setPlatformHomeRegion(entry.platform.id.toUpperCase(), 'oc')).toEqual({
      ...entry,
      homeRegion: 'oc',
    });
    expect((await store.findAnyPlatform(entry.platform.id))!.homeRegion).toBe('oc');
    expect(await regionColumns(entry.platform.id)).toMatchObject({ home_region: 'oc' });
    expect((await store.setPlatformHomeRegion(entry.platform.id, null)).homeRegion).toBeNull();
    expect(await regionColumns(entry.platform.id)).toMatchObject({ home_region: null });
    expect(await refusal(store.setPlatformHomeRegion(entry.platform.id, 'mars'))).toEqual({
      kind: 'invalid',
      message: 'homeRegion must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
      name: 'RegistryError',
    });
    expect(
      await refusal(store.addPlatform({ organizationId: ORG_A, type: 'PF4', name: 'x', homeRegion: 'EU' })),
    ).toEqual({
      kind: 'invalid',
      message: 'homeRegion must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
      name: 'RegistryError',
    });
    expect((await store.allPlatforms(ORG_A)).map((e) => e.platform.name)).not.toContain('x');
    expect(await refusal(store.setPlatformHomeRegion(randomUUID(), 'oc'))).toMatchObject({ kind: 'not_found' });
    await store.removePlatform(entry.platform.id);
  });

  it("pin an organization to a jurisdiction, its platforms' homes inside it", async () => {
    const org = await store.addOrganization({ name: 'Pinned', jurisdiction: 'eu' });
    expect(org.jurisdiction).toBe('eu');
    expect(await refusal(store.addOrganization({ name: 'x', jurisdiction: 'mars' }))).toEqual({
      kind: 'invalid',
      message: 'jurisdiction must be one of eu, fedramp, fedramp-high, us',
      name: 'RegistryError',
    });
    expect(
      await refusal(store.addPlatform({ organizationId: org.id, type: 'PF5', name: 'far', homeRegion: 'apac' })),
    ).toEqual({
      kind: 'invalid',
      message: "homeRegion apac lies outside the organization's jurisdiction eu: one of weur, eeur",
      name: 'RegistryError',
    });
    const entry = await store.addPlatform({ organizationId: org.id, type: 'PF5', name: 'near', homeRegion: 'eeur' });
    expect(entry).toMatchObject({ homeRegion: 'eeur', jurisdiction: 'eu' });
    expect(await regionColumns(entry.platform.id)).toStrictEqual({ home_region: 'eeur', jurisdiction: 'eu' });
    expect(await store.findPlatformEntry(org.id, entry.platform.id)).toEqual(entry);
    expect(await refusal(store.setPlatformHomeRegion(entry.platform.id, 'enam'))).toEqual({
      kind: 'invalid',
      message: "homeRegion enam lies outside the organization's jurisdiction eu: one of weur, eeur",
      name: 'RegistryError',
    });
    expect(await regionColumns(entry.platform.id)).toMatchObject({ home_region: 'eeur' });
    // A platform naming no home in a pinned organization is kept so: the edge moves its default home inside.
    const unhomed = await store.addPlatform({ organizationId: org.id, type: 'PF4', name: 'default' });
    expect(unhomed).toMatchObject({ homeRegion: null, jurisdiction: 'eu' });
    // Its jurisdiction stays while it has platforms (setting the same one again is no change).
    expect(await refusal(store.setOrganizationJurisdiction(org.id, 'us'))).toEqual({
      kind: 'conflict',
      message: `organization ${org.id} has 2 platform(s), whose objects and their stored idempotency records would be left in jurisdiction eu: set its jurisdiction before adding platforms, or remove them first`,
      name: 'RegistryError',
    });
    expect(await refusal(store.setOrganizationJurisdiction(org.id, null))).toMatchObject({ kind: 'conflict' });
    expect(await regionColumns(entry.platform.id)).toMatchObject({ jurisdiction: 'eu' });
    expect((await store.setOrganizationJurisdiction(org.id, 'eu')).jurisdiction).toBe('eu');
    await store.removePlatform(unhomed.platform.id);
    await store.removePlatform(entry.platform.id);
    expect(await store.setOrganizationJurisdiction(org.id.toUpperCase(), 'us')).toEqual({ ...org, jurisdiction: 'us' });
    expect((await store.setOrganizationJurisdiction(org.id, null)).jurisdiction).toBeNull();
    expect(await refusal(store.setOrganizationJurisdiction(org.id, 'moon'))).toMatchObject({ kind: 'invalid' });
    expect(await refusal(store.setOrganizationJurisdiction(randomUUID(), 'eu'))).toMatchObject({ kind: 'not_found' });
    expect((await store.allOrganizations()).find((o) => o.id === org.id)).toEqual({ ...org, jurisdiction: null });
    await store.removeOrganization(org.id);
  });

  it('refuse pinning an unpinned organization that has platforms', async () => {
    const org = await store.addOrganization({ name: 'Unpinned' });
    const entry = await store.addPlatform({
      organizationId: org.id,
      type: 'PF4',
      name: 'anywhere',
      homeRegion: 'apac',
    });
    expect(await refusal(store.setOrganizationJurisdiction(org.id, 'eu'))).toEqual({
      kind: 'conflict',
      message: `organization ${org.id} has 1 platform(s), whose objects and their stored idempotency records would be left outside any jurisdiction: set its jurisdiction before adding platforms, or remove them first`,
      name: 'RegistryError',
    });
    expect((await store.findAdminOrganization(org.id))!.jurisdiction).toBeNull();
    await store.removePlatform(entry.platform.id);
    await store.removeOrganization(org.id);
  });

  it("answer the edge's public records without the home region or the jurisdiction", async () => {
    const org = await store.addOrganization({ name: 'Public', jurisdiction: 'us' });
    const entry = await store.addPlatform({ organizationId: org.id, type: 'PF4', name: 'pub', homeRegion: 'wnam' });
    const publicOrg = { id: org.id, name: 'Public', created: org.created };
    expect(await store.findOrganization(org.id)).toStrictEqual(publicOrg);
    expect(await store.listOrganizations(org.id)).toStrictEqual([publicOrg]);
    const publicPlatform = {
      id: entry.platform.id,
      name: 'pub',
      type: 'PF4',
      organizationId: org.id,
      organization: publicOrg,
      created: entry.platform.created,
    };
    expect(entry.platform).toStrictEqual(publicPlatform);
    expect(await store.findPlatform(org.id, entry.platform.id)).toStrictEqual(publicPlatform);
    expect(await store.listPlatforms(org.id)).toStrictEqual([publicPlatform]);
    expect((await store.findPlatformEntry(org.id, entry.platform.id))!.platform).toStrictEqual(publicPlatform);
    await store.removePlatform(entry.platform.id);
    await store.removeOrganization(org.id);
  });

  it('read a stored region or jurisdiction this edge does not know as none', async () => {
    const org = await store.addOrganization({ name: 'Newer' });
    const entry = await store.addPlatform({ organizationId: org.id, type: 'PF4', name: 'newer' });
    const db = registry.db;
    await db.prepare('UPDATE trade_platforms SET home_region = ? WHERE id = ?').bind('mars', entry.platform.id).run();
    await db.prepare('UPDATE organizations SET jurisdiction = ? WHERE id = ?').bind('moon', org.id).run();
    expect(await store.findPlatformEntry(org.id, entry.platform.id)).toMatchObject(UNPLACED);
    expect((await store.findAdminOrganization(org.id))!.jurisdiction).toBeNull();
    await store.removePlatform(entry.platform.id);
    await store.removeOrganization(org.id);
  });
});

describe('migrations 0005 (broker lists), 0006 (regions) and 0007 (client networks)', () => {
  it("fills each platform's list from the broker it named, and leaves the default list to the others", async () => {
    // The file's database, emptied (the tests above are done with it): a registry of the previous version is built
    // in it from nothing, without starting a second workerd.
    const db = registry.db;
    await dropAllTables(db);
    // A registry of the previous version: the migrations before 0005, recorded as wrangler records them.
    const before = REGISTRY_MIGRATIONS.slice(0, REGISTRY_MIGRATIONS.indexOf('0005_broker_urls.sql'));
    await db.exec(
      'CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)',
    );
    for (const name of before) {
      const sql = readFileSync(join(import.meta.dirname, 'migrations', name), 'utf8');
      const statements = sql
        .split('\n')
        .filter((l) => !l.trim().startsWith('--'))
        .join('\n')
        .split(';')
        .map((t) => t.trim())
        .filter(Boolean);
      await db.batch([
        ...statements.map((t) => db.prepare(t)),
        db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name),
      ]);
    }
    const [org, named, plain] = [randomUUID(), randomUUID(), randomUUID()];
    await db.batch([
      db
        .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
        .bind(org, 'Old', '2026-01-01T00:00:00.000Z'),
      db
        .prepare(
          'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .bind(named, 'Named', 'PF4', org, 'http://127.0.0.1:9700', '2026-01-02T00:00:00.000Z'),
      db
        .prepare(
          'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .bind(plain, 'Plain', 'PF5', org, null, '2026-01-03T00:00:00.000Z'),
    ]);
    await db
      .prepare(
        'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, grant_types, scopes, created) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)',
      )
      .bind('old-client', org, null, 'h', 's', 1, 'client_credentials', 'webapi', '2026-01-04T00:00:00.000Z')
      .run();
    expect(await applyMigrations(db)).toStrictEqual([
      '0005_broker_urls.sql',
      '0006_regions.sql',
      '0007_client_networks.sql',
      '0008_webhook_endpoints.sql',
      '0009_operator_audit.sql',
      '0010_local_idempotency.sql',
    ]);
    const rows = await db.prepare('SELECT id, broker_urls, broker_url FROM trade_platforms ORDER BY created').all();
    expect(rows.results).toStrictEqual([
      { id: named, broker_urls: '["http://127.0.0.1:9700"]', broker_url: 'http://127.0.0.1:9700' },
      { id: plain, broker_urls: null, broker_url: null },
    ]);
    const migrated = new RegistryStore(db);
    expect((await migrated.allPlatforms(org)).map((e) => e.brokerUrls)).toStrictEqual([
      ['http://127.0.0.1:9700'],
      null,
    ]);
    // 0006 adds the region columns empty: every platform has the edge's default home, the organization no jurisdiction.
    const placed = await db
      .prepare(
        'SELECT p.id, p.home_region, o.jurisdiction FROM trade_platforms p JOIN organizations o ON o.id = p.organization_id ORDER BY p.created',
      )
      .all();
    expect(placed.results).toStrictEqual([
      { id: named, home_region: null, jurisdiction: null },
      { id: plain, home_region: null, jurisdiction: null },
    ]);
    expect((await migrated.allPlatforms(org)).map((e) => [e.homeRegion, e.jurisdiction])).toStrictEqual([
      [null, null],
      [null, null],
    ]);
    expect(await migrated.allOrganizations()).toStrictEqual([
      { id: org, name: 'Old', created: '2026-01-01T00:00:00.000Z', jurisdiction: null },
    ]);
    // 0007 leaves every client registered before it usable from any source.
    expect((await migrated.findClientStanding('old-client'))!.allowedNetworks).toStrictEqual([]);
    const moved = await migrated.setPlatformHomeRegion(named, 'enam');
    expect(moved.homeRegion).toBe('enam');
    expect(await applyMigrations(db)).toStrictEqual([]);
  });
});
