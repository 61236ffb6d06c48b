/**
 * External identity provider mode through the real worker: with AUTH_ISSUER and AUTH_JWKS_URL set, the local issuer
 * is off and tokens verify against the provider's JWKS, served here by a small HTTP server on 127.0.0.1 whose keys
 * the test rotates. Provider tokens may carry their scopes as arrays and name the client in `azp` alone; a scripted
 * broker shows which client the edge took the caller to be (Idempotency-Key answers are kept per client).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { randomUUID } from 'node:crypto';
import { AUDIENCE, ORG_A, ORG_B, PF4_B, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';

const ISSUER = 'https://idp.example.test/tenant';
const ORG_CLAIM = 'https://gateway.example.test/org';

interface IdpKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function idpKey(kid: string, alg: 'ES256' | 'RS256' = 'ES256'): Promise<IdpKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

let edge: TestEdge;
let broker: FakeBroker;
let jwksServer: Server;
let published: IdpKey[] = [];
let fetches = 0;
let first: IdpKey;

beforeAll(async () => {
  first = await idpKey('idp-1');
  published = [first];
  jwksServer = createServer((req, res) => {
    if (req.url !== '/keys') {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: published.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((done) => jwksServer.listen(0, '127.0.0.1', done));
  const { port } = jwksServer.address() as AddressInfo;
  broker = await startFakeBroker();
  edge = await startTestEdge({
    vars: {
      AUTH_ISSUER: ISSUER,
      AUTH_JWKS_URL: `http://127.0.0.1:${port}/keys`,
      AUTH_ORG_CLAIM: ORG_CLAIM,
      BROKER_URL: broker.url,
    },
  });
});
afterAll(async () => {
  await edge?.close();
  await broker?.close();
  if (jwksServer?.listening) await new Promise((done) => jwksServer.close(done));
});

const now = () => Math.floor(Date.now() / 1000);
function idpToken(key: IdpKey, claims: JWTPayload = {}) {
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now(),
    exp: now() + 300,
    scope: 'webapi',
    client_id: 'partner-app',
    [ORG_CLAIM]: ORG_B,
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}
async function organizations(token: string) {
  const res = await fetch(new URL('/api/Organizations', edge.url), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as unknown, challenge: res.headers.get('www-authenticate') };
}

describe('external identity provider', () => {
  it('turns the local issuer off and says where tokens come from', async () => {
    const expected = { error: 'not_found', error_description: `tokens are issued by ${ISSUER}` };
    const token = await fetch(new URL('/connect/token', edge.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(404);
    expect(await token.json()).toEqual(expected);
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const res = await fetch(new URL(path, edge.url));
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(expected);
    }
  });

  it("accepts the provider's tokens, reading the organization from the configured claim, and caches its keys", async () => {
    const before = fetches;
    const token = await idpToken(first);
    for (let i = 0; i < 3; i++) {
      const res = await organizations(token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([expect.objectContaining({ id: ORG_B, name: 'Org B' })]);
    }
    expect(fetches - before).toBe(1);
  });

  it('refuses tokens of another issuer, audience or organization claim, and locally signed ones', async () => {
    const wrongIssuer = await organizations(await idpToken(first, { iss: 'https://evil.example.test' }));
    expect(wrongIssuer.status).toBe(401);
    expect(wrongIssuer.challenge).toMatch(
      /error="invalid_token", error_description="the access token has an unexpected issuer"/,
    );
    expect((await organizations(await idpToken(first, { aud: 'other' }))).status).toBe(401);
    const noOrg = await organizations(await idpToken(first, { [ORG_CLAIM]: undefined, org: ORG_A }));
    expect(noOrg.status).toBe(401);
    expect(noOrg.body).toEqual({
      error: 'invalid_token',
      error_description: `the access token has no valid ${ORG_CLAIM} claim`,
    });
    // The local key is not trusted in this mode, even for a token that claims the provider as issuer.
    const local = {
      kid: edge.privateJwk.kid!,
      alg: 'ES256',
      privateKey: (await importJWK(edge.privateJwk, 'ES256')) as CryptoKey,
      publicJwk: {},
    };
    const localSigned = await organizations(await idpToken(local));
    expect(localSigned.status).toBe(401);
    expect(localSigned.challenge).toMatch(/unknown key/);
    expect((await organizations(await idpToken(first, { scope: 'read' }))).status).toBe(403);
  });

  it('reads scopes sent as an array or in scp, as well as a space-separated string', async () => {
    expect((await organizations(await idpToken(first, { scope: ['webapi', 'webapi.write'] }))).status).toBe(200);
    expect((await organizations(await idpToken(first, { scope: undefined, scp: ['webapi'] }))).status).toBe(200);
    expect((await organizations(await idpToken(first, { scope: undefined, scp: 'openid webapi' }))).status).toBe(200);
    expect((await organizations(await idpToken(first, { scope: ['openid'] }))).status).toBe(403);
  });

  it('reads scopes from a space-delimited string or an array, in scope or scp', async () => {
    for (const claims of [
      { scope: ['openid', 'webapi'] },
      { scope: undefined, scp: ['webapi'] },
      { scope: undefined, scp: 'openid webapi' },
    ] as JWTPayload[]) {
      const res = await organizations(await idpToken(first, claims));
      expect({ claims, status: res.status }).toEqual({ claims, status: 200 });
    }
    for (const claims of [
      { scope: ['openid', 'webapix'] },
      { scope: undefined, scp: ['read'] },
      { scope: [] },
      { scope: undefined },
    ] as JWTPayload[]) {
      const res = await organizations(await idpToken(first, claims));
      expect({ claims, status: res.status, body: res.body }).toEqual({
        claims,
        status: 403,
        body: { error: 'insufficient_scope', error_description: 'the access token lacks the webapi scope' },
      });
    }
  });

  it('takes the client from azp when the token has no client_id, and refuses a token naming neither', async () => {
    const noClient = await organizations(await idpToken(first, { client_id: undefined }));
    expect(noClient.status).toBe(401);
    expect(noClient.body).toEqual({
      error: 'invalid_token',
      error_description: 'the access token has no client_id claim',
    });

    // Which client the caller is shows in Idempotency-Key answers, which are kept per client.
    broker.script.set('PF4.UserRecordNew', { reply: (f) => ({ ok: true, data: { frame: f.id } }) });
    const create = async (claims: JWTPayload, key: string) => {
      const res = await fetch(new URL(`/api/v2/PF4/${PF4_B}/UserRecordNew`, edge.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await idpToken(first, { scope: 'webapi webapi.write', ...claims })}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify({ group: 'demo', name: 'Alice' }),
      });
      return {
        status: res.status,
        replayed: res.headers.get('idempotency-replayed'),
        body: (await res.json()) as { error: unknown },
      };
    };
    const key = randomUUID();
    const byAzp = await create({ client_id: undefined, azp: 'partner-azp' }, key);
    expect(byAzp).toMatchObject({ status: 200, replayed: null, body: { error: null } });
    // The same client named by client_id: the same caller, so the stored answer is replayed.
    expect(await create({ client_id: 'partner-azp' }, key)).toMatchObject({ status: 200, replayed: 'true' });
    // client_id wins over azp; another client does not share the key.
    expect(await create({ client_id: 'partner-azp', azp: 'someone-else' }, key)).toMatchObject({ replayed: 'true' });
    expect(await create({ client_id: undefined, azp: 'someone-else' }, key)).toMatchObject({
      status: 200,
      replayed: null,
    });
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(2);
  });

  it('follows a key rotation: a token with a new kid is accepted once the JWKS publishes it', async () => {
    const second = await idpKey('idp-2');
    const rsa = await idpKey('idp-rsa', 'RS256');
    published = [second, rsa];
    // Refused as signed by an unknown key until the refetch cool-down of the previous fetch has passed, then accepted.
    const token = await idpToken(second, { [ORG_CLAIM]: ORG_A });
    const res = await until(async () => {
      const r = await organizations(token);
      if (r.status !== 200) expect(r.challenge).toMatch(/unknown key/);
      return r.status === 200 ? r : null;
    }, 'the rotated key to be accepted');
    expect(res.body).toEqual([expect.objectContaining({ id: ORG_A })]);
    expect((await organizations(await idpToken(rsa))).status).toBe(200);

    // The retired key left the refreshed set.
    const retired = await organizations(await idpToken(first));
    expect(retired.status).toBe(401);
    expect(retired.challenge).toMatch(/unknown key/);
  });

  it('answers 503 when the provider keys cannot be fetched', async () => {
    await new Promise((done) => jwksServer.close(done));
    const unknown = await idpKey('idp-3');
    const token = await idpToken(unknown);
    // Inside the refetch cool-down the kid is merely unknown (401); the first refetch attempt after it fails (503).
    const res = await until(async () => {
      const r = await organizations(token);
      if (r.status !== 503) expect(r.status).toBe(401);
      return r.status === 503 ? r : null;
    }, 'a refetch of the provider keys');
    expect(res.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the identity provider keys could not be fetched',
    });
  });
});
