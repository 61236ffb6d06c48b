/**
 * API clients' allowed networks through the real worker in workerd: a client registered with networks gets tokens,
 * answers and streams only from a source inside them, the address Cloudflare's front names (Miniflare's own entry
 * stands in for the front here, setting `request.cf` and passing CF-Connecting-IP on); from anywhere else, and on the
 * local socket whatever it sends, it is refused with the rule and its own address, never the list, and each refusal is
 * counted in /metrics. The organization's administrators read its clients and set their networks through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_A, ORG_B, PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';

const METRICS_TOKEN = 'metrics-token-allowed-networks';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The secrets are hashed cheaply: what is tested is where a client may be used from, not the hashing. */
const CHEAP = { iterations: 1_000 };
const OFFICE_NETWORKS = ['203.0.113.0/24', '2001:db8::/32'];
const outside = (clientId: string, address: string) =>
  `client ${clientId} may be used only from its allowed networks, and this request comes from ${address}`;
const UNKNOWN_SOURCE = (clientId: string) =>
  `client ${clientId} may be used only from its allowed networks, and this request's source address is not known (only Cloudflare's front names it)`;

let edge: TestEdge;
let admin: string;

beforeAll(async () => {
  // Standings read afresh on every call, so a changed list holds at once.
  edge = await startTestEdge({ vars: { METRICS_TOKEN, REGISTRY_CACHE_SECONDS: '0' } });
  await edge.seedClient('office', 'office-secret', ORG_A, 'webapi', CHEAP);
  await edge.seedClient('elsewhere', 'elsewhere-secret', ORG_B, 'webapi', CHEAP);
  const db = await edge.db();
  await db
    .prepare('UPDATE api_clients SET allowed_networks = ? WHERE client_id = ?')
    .bind(OFFICE_NETWORKS.join(' '), 'office')
    .run();
  admin = await edge.token({ client_id: 'admin-a' });
}, 60_000);

afterAll(async () => {
  await edge?.close();
});

/** A request that came through the front from `address`. */
function fromAddress(address: string, path: string, init: RequestInit = {}) {
  return edge.miniflare.dispatchFetch(new URL(path, edge.url), {
    ...init,
    headers: { ...(init.headers as Record<string, string>), 'CF-Connecting-IP': address },
  } as never) as unknown as Promise<Response>;
}

const tokenForm = (clientId: string, secret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();

async function tokenFrom(address: string | null, clientId = 'office', secret = 'office-secret') {
  const init = { method: 'POST', headers: FORM, body: tokenForm(clientId, secret) };
  const res =
    address === null
      ? await fetch(new URL('/connect/token', edge.url), {
          ...init,
          headers: { ...FORM, 'CF-Connecting-IP': '203.0.113.9' },
        })
      : await fromAddress(address, '/connect/token', init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function refusedCount(endpoint: 'token' | 'api'): Promise<number> {
  const res = await fetch(new URL('/metrics', edge.url), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith(`edge_source_refused_total{endpoint="${endpoint}"}`));
  return Number(line?.split(' ')[1]);
}

async function adminCall(method: string, path: string, body?: unknown, token = admin) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('a client with allowed networks', () => {
  it('gets a token from inside them, and from anywhere else is refused unauthorized_client after authenticating', async () => {
    const before = await refusedCount('token');
    for (const address of ['203.0.113.10', '2001:db8:1::5', '::ffff:203.0.113.77']) {
      const inside = await tokenFrom(address);
      expect(inside.status, address).toBe(200);
      expect(inside.body).toMatchObject({ token_type: 'Bearer', scope: 'webapi' });
    }
    expect(await tokenFrom('198.51.100.1')).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: outside('office', '198.51.100.1') },
    });
    // The local socket names no source, whatever header a caller sends itself.
    expect(await tokenFrom(null)).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: UNKNOWN_SOURCE('office') },
    });
    // Without the secret nothing is told about the list: the usual failure.
    expect(await tokenFrom('198.51.100.1', 'office', 'wrong')).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
    expect(await refusedCount('token')).toBe(before + 2);
  });

  it("is answered from inside them, and refused elsewhere in the route generation's shape, never naming its networks", async () => {
    const token = (await tokenFrom('203.0.113.10')).body.access_token as string;
    const auth = { authorization: `Bearer ${token}` };
    const before = await refusedCount('api');

    const inside = await fromAddress('203.0.113.200', '/api/TradePlatforms', { headers: auth });
    expect(inside.status).toBe(200);
    expect(((await inside.json()) as Array<{ id: string }>).map((p) => p.id)).toContain(PF4_A);

    const v1 = await fromAddress('198.51.100.1', '/api/TradePlatforms', { headers: auth });
    expect(v1.status).toBe(403);
    const v1Body = await v1.text();
    expect(JSON.parse(v1Body)).toEqual({
      errorType: 'Forbidden',
      errorCode: 'Forbidden',
      errorDescription: outside('office', '198.51.100.1'),
    });
    const v2 = await fromAddress('2001:db9::1', `/api/v2/PF4/${PF4_A}/ServerTime`, { headers: auth });
    expect(v2.status).toBe(200);
    const v2Body = await v2.text();
    expect(JSON.parse(v2Body)).toMatchObject({
      data: null,
      error: { code: 'Forbidden', managerCode: null, message: outside('office', '2001:db9::1') },
    });
    // A stream is refused before it is opened.
    const stream = await fromAddress('198.51.100.1', `/api/v2/PF4/${PF4_A}/Stream?ticks`, { headers: auth });
    expect(await stream.json()).toMatchObject({
      error: { code: 'Forbidden', message: outside('office', '198.51.100.1') },
    });
    for (const text of [v1Body, v2Body]) for (const network of OFFICE_NETWORKS) expect(text).not.toContain(network);

    // On the local socket the source is not known: outside every list.
    const local = await fetch(new URL('/api/TradePlatforms', edge.url), {
      headers: { ...auth, 'CF-Connecting-IP': '203.0.113.9' },
    });
    expect(local.status).toBe(403);
    expect(((await local.json()) as { errorDescription: string }).errorDescription).toBe(UNKNOWN_SOURCE('office'));
    expect(await refusedCount('api')).toBe(before + 4);
  });
});

describe("the organization's clients through the admin API", () => {
  it("lists and reads its own clients without secret material, another organization's as unknown", async () => {
    const list = await adminCall('GET', '/api/Clients');
    expect(list.status).toBe(200);
    const office = list.body.find((c: { clientId: string }) => c.clientId === 'office');
    expect(office).toEqual({
      clientId: 'office',
      organizationId: ORG_A,
      name: 'office',
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: ['webapi'],
      allowedNetworks: OFFICE_NETWORKS,
      created: expect.any(String),
    });
    expect(list.body.map((c: { organizationId: string }) => c.organizationId)).toEqual(list.body.map(() => ORG_A));
    expect(JSON.stringify(list.body)).not.toMatch(/secret|hash|salt/i);
    expect(await adminCall('GET', '/api/Clients/office')).toEqual({ status: 200, body: office });
    const foreign = await adminCall('GET', '/api/Clients/elsewhere');
    const unknown = await adminCall('GET', '/api/Clients/nobody');
    expect(foreign).toEqual({
      status: 404,
      body: { errorType: 'NotFound', errorCode: 'NotFound', errorDescription: 'client elsewhere not found' },
    });
    expect(unknown.status).toBe(404);
    expect(await adminCall('GET', '/api/Clients/not%20an%20id')).toEqual({
      status: 400,
      body: {
        errorType: 'Validation',
        errorCode: 'Validation',
        errorDescription: 'clientId: client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -',
      },
    });
  });

  it("sets a client's networks, canonical, holding its next call; a bad list is refused whole, naming the entry", async () => {
    const token = (await tokenFrom('203.0.113.10')).body.access_token as string;
    const call = (address: string) =>
      fromAddress(address, '/api/TradePlatforms', { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      );
    expect(await call('198.51.100.7')).toBe(403);

    const set = await adminCall('PUT', '/api/Clients/office/AllowedNetworks', {
      allowedNetworks: ['198.51.100.7', '2001:DB8::/32', '198.51.100.7/32'],
    });
    expect(set).toMatchObject({
      status: 200,
      body: { clientId: 'office', allowedNetworks: ['198.51.100.7/32', '2001:db8::/32'] },
    });
    expect(await call('198.51.100.7')).toBe(200);
    expect(await call('203.0.113.10')).toBe(403);

    const bad = await adminCall('PUT', '/api/Clients/office/AllowedNetworks', {
      allowedNetworks: ['10.0.0.0/8', '203.0.113.5/24'],
    });
    expect(bad).toEqual({
      status: 400,
      body: {
        errorType: 'Validation',
        errorCode: 'Validation',
        errorDescription:
          'body.allowedNetworks[1]: 203.0.113.5/24 has bits set past its /24 prefix: the network is 203.0.113.0/24',
      },
    });
    expect((await adminCall('PUT', '/api/Clients/office/AllowedNetworks', {})).body.errorDescription).toMatch(
      /^body\.allowedNetworks: /,
    );
    expect((await adminCall('GET', '/api/Clients/office')).body.allowedNetworks).toEqual([
      '198.51.100.7/32',
      '2001:db8::/32',
    ]);
    expect((await adminCall('PUT', '/api/Clients/elsewhere/AllowedNetworks', { allowedNetworks: [] })).status).toBe(
      404,
    );

    // An empty list: any source again.
    expect((await adminCall('PUT', '/api/Clients/office/AllowedNetworks', { allowedNetworks: [] })).body).toMatchObject(
      {
        allowedNetworks: [],
      },
    );
    expect(await call('203.0.113.10')).toBe(200);
    expect(await call('192.0.2.1')).toBe(200);
    await adminCall('PUT', '/api/Clients/office/AllowedNetworks', { allowedNetworks: OFFICE_NETWORKS });
  });

  it('is for administrators: a token without webapi.admin is refused 403 naming the scope', async () => {
    const writer = await edge.token({ client_id: 'writer-a', scope: 'webapi webapi.write' });
    for (const [method, path, body] of [
      ['GET', '/api/Clients', undefined],
      ['GET', '/api/Clients/office', undefined],
      ['PUT', '/api/Clients/office/AllowedNetworks', { allowedNetworks: [] }],
    ] as const) {
      expect(await adminCall(method, path, body, writer), path).toEqual({
        status: 403,
        body: {
          errorType: 'Forbidden',
          errorCode: 'Forbidden',
          errorDescription: 'the access token lacks the webapi.admin scope this operation needs',
        },
      });
    }
    expect((await adminCall('GET', '/api/Clients/office')).body.allowedNetworks).toEqual(OFFICE_NETWORKS);
  });
});
