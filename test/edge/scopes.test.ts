/**
 * Least privilege through the real worker: clients hold scopes (webapi to read, webapi.write to change, webapi.admin
 * for destructive and administrative operations), the token endpoint grants only held scopes, every operation needs
 * the scope its catalog entry names and a token without it is refused (v2 `Forbidden` envelope with the
 * insufficient_scope challenge), and tokens issued in the future or living longer than the maximum are refused.
 * Unknown v2 routes answer an envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, importJWK, SignJWT } from 'jose';
import { AUDIENCE, ORG_A, PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;

beforeAll(async () => {
  broker = await startFakeBroker();
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url, TOKEN_MAX_LIFETIME_SECONDS: '7200' } });
  await edge.seedClient('reader', 'reader-secret', ORG_A, 'webapi');
  await edge.seedClient('writer', 'writer-secret', ORG_A, 'webapi webapi.write');
  await edge.seedClient('admin', 'admin-secret', ORG_A, 'webapi webapi.write webapi.admin');
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

async function tokenFor(clientId: string, scope?: string) {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: `${clientId}-secret`,
  });
  if (scope !== undefined) form.set('scope', scope);
  const res = await fetch(new URL('/connect/token', edge.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), challenge: res.headers.get('www-authenticate') };
}

const v2 = `/api/v2/PF4/${PF4_A}`;
const read = (t: string) => call(t, 'GET', `${v2}/ServerTime`);
const write = (t: string) => call(t, 'POST', `${v2}/UserRecordNew`, { group: 'demo', name: 'Scoped' });
const destroy = (t: string) => call(t, 'POST', `${v2}/SrvRestart?confirm=true`);

describe('token endpoint', () => {
  it('grants every held scope to a request for webapi (what existing SDKs ask) or for no scope', async () => {
    for (const scope of ['webapi', undefined]) {
      const admin = await tokenFor('admin', scope);
      expect(admin.status).toBe(200);
      expect(admin.body.scope).toBe('webapi webapi.write webapi.admin');
      expect(decodeJwt(admin.body.access_token).scope).toBe('webapi webapi.write webapi.admin');
      expect((await tokenFor('reader', scope)).body.scope).toBe('webapi');
    }
  });

  it('grants only the held part of a request for more, and narrows to what was asked', async () => {
    const reader = await tokenFor('reader', 'webapi webapi.write webapi.admin');
    expect(reader.status).toBe(200);
    expect(reader.body.scope).toBe('webapi');
    expect(decodeJwt(reader.body.access_token).scope).toBe('webapi');
    const narrowed = await tokenFor('admin', 'webapi.write');
    expect(narrowed.body.scope).toBe('webapi webapi.write');
  });

  it('refuses an unknown scope as invalid_scope', async () => {
    const res = await tokenFor('admin', 'webapi superuser');
    expect(res).toEqual({
      status: 400,
      body: {
        error: 'invalid_scope',
        error_description:
          'unknown scope superuser: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
      },
    });
  });
});

describe('each operation needs its scope', () => {
  it('lets a read-only client read and refuses its writes and destructive calls with a Forbidden envelope', async () => {
    const token = (await tokenFor('reader')).body.access_token;
    expect((await read(token)).body.error).toBeNull();
    broker.frames.length = 0;
    const refused = await write(token);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({
      data: null,
      error: {
        code: 'Forbidden',
        managerCode: null,
        message: 'the access token lacks the webapi.write scope this operation needs',
      },
    });
    expect(refused.challenge).toBe(
      'Bearer realm="webapi", error="insufficient_scope", error_description="the access token lacks the webapi.write scope this operation needs", scope="webapi.write"',
    );
    expect((await destroy(token)).body.error).toMatchObject({
      code: 'Forbidden',
      message: expect.stringContaining('webapi.admin'),
    });
    expect(broker.frames).toHaveLength(0);
  });

  it('lets a writer change but not run destructive operations, and an admin do both', async () => {
    const writer = (await tokenFor('writer')).body.access_token;
    expect((await write(writer)).body.error).toBeNull();
    expect((await destroy(writer)).body.error).toMatchObject({ code: 'Forbidden' });
    const admin = (await tokenFor('admin')).body.access_token;
    expect((await write(admin)).body.error).toBeNull();
    expect((await destroy(admin)).body.error).toBeNull();
    expect(broker.framesFor('PF4.SrvRestart')).toHaveLength(1);
  });

  it('refuses the scope a token claims but its client does not hold', async () => {
    const forged = await edge.token({ client_id: 'reader', scope: 'webapi webapi.write webapi.admin' });
    expect((await write(forged)).body.error).toMatchObject({ code: 'Forbidden' });
  });
});

describe('token times', () => {
  const now = () => Math.floor(Date.now() / 1000);
  async function sign(claims: Record<string, unknown>) {
    const key = await importJWK(edge.privateJwk, 'ES256');
    return new SignJWT({ iss: edge.issuer, aud: AUDIENCE, scope: 'webapi', client_id: 'reader', org: ORG_A, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: edge.privateJwk.kid, typ: 'at+jwt' })
      .sign(key);
  }

  it('refuses a token living longer than TOKEN_MAX_LIFETIME_SECONDS, and accepts one at the maximum', async () => {
    const far = await call(await sign({ iat: now(), exp: now() + 10 * 365 * 86_400 }), 'GET', '/api/Organizations');
    expect(far.status).toBe(401);
    expect(far.body).toEqual({
      error: 'invalid_token',
      error_description: 'the access token lives longer than the 7200 s this API accepts',
    });
    const noIat = await call(await sign({ exp: now() + 7300 }), 'GET', '/api/Organizations');
    expect(noIat.status).toBe(401);
    expect((await call(await sign({ iat: now(), exp: now() + 7200 }), 'GET', '/api/Organizations')).status).toBe(200);
  });

  it('refuses a token issued in the future (beyond the clock tolerance)', async () => {
    const future = await call(await sign({ iat: now() + 3600, exp: now() + 3700 }), 'GET', '/api/Organizations');
    expect(future.status).toBe(401);
    expect(future.body).toEqual({
      error: 'invalid_token',
      error_description: 'the access token was issued in the future',
    });
  });
});

describe('unknown routes', () => {
  it('answers an unknown v2 route with a NotFound envelope, and other unknown /api/ routes with 404', async () => {
    const token = await edge.token();
    const v2Unknown = await call(token, 'GET', `${v2}/NoSuchOperation`);
    expect(v2Unknown.status).toBe(200);
    expect(v2Unknown.body).toEqual({
      data: null,
      error: { code: 'NotFound', managerCode: null, message: `no route for GET ${v2}/NoSuchOperation` },
      meta: { activityId: expect.stringMatching(/^[0-9a-f]{32}$/) },
    });
    const elsewhere = await call(token, 'GET', '/api/NoSuchThing');
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toMatchObject({ errorType: 'NotFound' });
  });
});
