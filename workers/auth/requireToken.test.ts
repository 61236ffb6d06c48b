/**
 * The Bearer token check (requireToken) run in this process over a real D1 registry: every reason a token is refused,
 * in the words the caller gets back, the caller a good token yields (organization lower-cased, scopes narrowed to
 * what the client still holds), and an external identity provider's tokens (RS256 keys fetched from its JWKS on
 * 127.0.0.1, the organization in a configured claim, the client in azp, unregistered clients taken as stated).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { CompactSign, exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { AppEnv, Env } from '../env.js';
import { requireToken } from './requireToken.js';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';

const ISSUER = 'http://127.0.0.1:8787';
const ORG_A = randomUUID();
const ORG_B = randomUUID();
const REVOKED = 'the access token was revoked: its client is disabled or no longer registered';

let registry: RegistryDb;
let localJwk: JWK;
let localKey: CryptoKey;
let otherKey: CryptoKey;

async function client(
  clientId: string,
  organizationId: string,
  scopes = 'webapi webapi.write webapi.admin',
  disabled = 0,
  networks = '',
) {
  await registry.db
    .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, scopes, allowed_networks, created)
    VALUES (?, ?, ?, 'unused', 'unused', 1, ?, ?, ?, ?)`)
    .bind(clientId, organizationId, clientId, disabled, scopes, networks, new Date().toISOString())
    .run();
}

beforeAll(async () => {
  registry = await startRegistryDb();
  const db = registry.db;
  const now = new Date().toISOString();
  await db.batch([
    db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(ORG_A, 'A', now),
    db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(ORG_B, 'B', now),
  ]);
  await client('client-a', ORG_A);
  await client('reader', ORG_A, 'webapi');
  await client('off', ORG_A, 'webapi', 1);
  await client('client-b', ORG_B);
  await client('office', ORG_A, 'webapi', 0, '203.0.113.0/24 2001:db8::/32');
  const pair = await generateKeyPair('ES256', { extractable: true });
  localJwk = { ...(await exportJWK(pair.privateKey)), kid: 'local-1' };
  localKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
}, 60_000);
afterAll(async () => {
  await registry?.close();
});

/**
 * The API behind requireToken(): answers the caller it set. `from` sends the request as Cloudflare's front hands it on
 * (`request.cf` set, the address in CF-Connecting-IP); `path` calls a v2 path instead.
 */
function api(vars: Partial<Env>) {
  const app = new Hono<AppEnv>();
  app.use('/api/*', requireToken());
  // The caller without its expiry and address (asserted on their own), so the identity checks read as identities.
  app.get('/api/*', (c) => {
    const { expiresAt, address, ...identity } = c.get('caller');
    if (c.req.query('address') !== undefined) return c.json({ ...identity, address });
    return c.json(c.req.query('expiry') === undefined ? identity : { ...identity, expiresAt });
  });
  return async (authorization?: string, query = '', from?: { address: string | null; path?: string }) => {
    const request = new Request(`http://edge.test${from?.path ?? '/api/caller'}${query}`, {
      headers: {
        ...(authorization === undefined ? {} : { authorization }),
        ...(from?.address ? { 'cf-connecting-ip': from.address } : {}),
      },
    });
    if (from) Object.defineProperty(request, 'cf', { value: { colo: 'FRA' } });
    const res = await app.request(request, undefined, { DB: registry.db, REGISTRY_CACHE_SECONDS: '0', ...vars });
    return {
      status: res.status,
      body: await res.json<Record<string, unknown>>(),
      challenge: res.headers.get('www-authenticate'),
    };
  };
}

const localVars = (): Partial<Env> => ({
  AUTH_SIGNING_KEY: JSON.stringify(localJwk),
  PUBLIC_URL: ISSUER,
  AUTH_AUDIENCE: 'webapi',
});
const nowS = () => Math.floor(Date.now() / 1000);

interface Mint {
  claims?: JWTPayload;
  header?: Record<string, unknown>;
  key?: CryptoKey;
  issuer?: string;
  audience?: string;
  iat?: number;
  exp?: number | null;
  alg?: string;
}

async function mint({
  claims = {},
  header = {},
  key = localKey,
  issuer = ISSUER,
  audience = 'webapi',
  iat = nowS(),
  exp = nowS() + 600,
  alg = 'ES256',
}: Mint = {}) {
  const jwt = new SignJWT({
    scope: 'webapi webapi.write',
    client_id: 'client-a',
    org: ORG_A,
    jti: randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg, typ: 'at+jwt', kid: 'local-1', ...header })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt(iat);
  if (exp !== null) jwt.setExpirationTime(exp);
  return `Bearer ${await jwt.sign(key)}`;
}

const refused = (error: string, description: string) => ({ error, error_description: description });

describe('Bearer credentials', () => {
  it('challenge a request without credentials, or with another scheme, naming no error', async () => {
    const call = api(localVars());
    for (const authorization of [
      undefined,
      'Basic Y2xpZW50OnNlY3JldA==',
      'Bearerish abc',
      'Token bearer abc',
      'MAC Bearer abc',
    ]) {
      expect(await call(authorization)).toEqual({
        status: 401,
        body: refused('invalid_token', 'an access token is required'),
        challenge: 'Bearer realm="webapi"',
      });
    }
  });

  it('call a Bearer header without a single b64token invalid_request', async () => {
    const call = api(localVars());
    for (const authorization of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer a"b', 'Bearer\tabc']) {
      const res = await call(authorization);
      expect(res.status, authorization).toBe(400);
      expect(res.body).toEqual(refused('invalid_request', 'the Authorization header is not a valid Bearer credential'));
    }
  });

  it('yield the caller of a good token: its client, its organization lower-cased, the scopes its client holds', async () => {
    const call = api(localVars());
    const token = await mint({ claims: { org: ORG_A.toUpperCase() } });
    expect(await call(token)).toMatchObject({
      status: 200,
      body: { clientId: 'client-a', organizationId: ORG_A, scopes: ['webapi', 'webapi.write'] },
    });
    // Any case of the scheme, any number of spaces, surrounding whitespace.
    expect((await call(`  bearer   ${token.slice('Bearer '.length)}  `)).status).toBe(200);
    // A remembered token is answered the same.
    expect((await call(token)).body).toEqual({
      clientId: 'client-a',
      organizationId: ORG_A,
      scopes: ['webapi', 'webapi.write'],
    });
    // The client holds webapi alone now: its tokens carry no more.
    expect(
      (await call(await mint({ claims: { client_id: 'reader', scope: 'webapi webapi.write webapi.admin' } }))).body,
    ).toEqual({ clientId: 'reader', organizationId: ORG_A, scopes: ['webapi'] });
  });

  it("carry the token's end, its exp plus the clock tolerance, in epoch milliseconds, for the streams that end with it", async () => {
    const exp = nowS() + 321;
    expect((await api(localVars())(await mint({ exp }), '?expiry')).body).toMatchObject({
      clientId: 'client-a',
      expiresAt: (exp + 5) * 1000,
    });
    expect(
      (await api({ ...localVars(), TOKEN_CLOCK_TOLERANCE_SECONDS: '0' })(await mint({ exp }), '?expiry')).body,
    ).toMatchObject({ expiresAt: exp * 1000 });
  });
});

describe('refused tokens', () => {
  it('name why the signature check failed', async () => {
    const call = api(localVars());
    const cases: [Promise<string>, string][] = [
      [mint({ exp: nowS() - 61 }), 'the access token expired'],
      [mint({ issuer: 'https://elsewhere' }), 'the access token has an unexpected issuer'],
      [mint({ audience: 'other' }), 'the access token has an unexpected audience'],
      [mint({ claims: { nbf: nowS() + 120 } }), 'the access token is not yet valid'],
      [mint({ header: { typ: 'JWT' } }), 'the access token has an unexpected type'],
      [mint({ exp: null }), 'the access token claim exp is invalid'],
      [mint({ key: otherKey }), 'the access token signature is invalid'],
      [
        mint({ alg: 'HS256', key: new TextEncoder().encode('x'.repeat(32)) as unknown as CryptoKey }),
        'the access token is signed with an algorithm that is not accepted',
      ],
      [Promise.resolve('Bearer abc.def.ghi'), 'the access token is malformed'],
      [Promise.resolve('Bearer abc'), 'the access token is malformed'],
    ];
    for (const [token, description] of cases) {
      const res = await call(await token);
      expect(res.body, description).toEqual(refused('invalid_token', description));
      expect(res.status).toBe(401);
      expect(res.challenge).toBe(`Bearer realm="webapi", error="invalid_token", error_description="${description}"`);
    }
  });

  it('call a signed token whose claims are not a JSON object malformed', async () => {
    const jws = await new CompactSign(new TextEncoder().encode('not a claims set'))
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'local-1' })
      .sign(localKey);
    expect((await api(localVars())(`Bearer ${jws}`)).body).toEqual(
      refused('invalid_token', 'the access token is malformed'),
    );
  });

  it('remember a verified token per issuer and audience only', async () => {
    const token = await mint();
    expect((await api(localVars())(token)).status).toBe(200);
    // The same token before an edge of another audience is verified afresh, and refused.
    expect((await api({ ...localVars(), AUTH_AUDIENCE: 'other-api' })(token)).body).toEqual(
      refused('invalid_token', 'the access token has an unexpected audience'),
    );
    expect((await api({ ...localVars(), PUBLIC_URL: 'https://other.example' })(token)).body).toEqual(
      refused('invalid_token', 'the access token has an unexpected issuer'),
    );
  });

  it('keep accepting a verified token until it expires after its signing key is replaced', async () => {
    const token = await mint();
    expect((await api(localVars())(token)).status).toBe(200);
    const replaced = {
      ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)),
      kid: 'local-2',
    };
    const afterRotation = api({ ...localVars(), AUTH_SIGNING_KEY: JSON.stringify(replaced) });
    expect((await afterRotation(token)).body).toEqual({
      clientId: 'client-a',
      organizationId: ORG_A,
      scopes: ['webapi', 'webapi.write'],
    });
    // A token of the old key not seen before is not.
    expect((await afterRotation(await mint())).body).toEqual(
      refused('invalid_token', 'the access token signature is invalid'),
    );
  });

  it('accept expiry and nbf within the clock tolerance (5 s unless TOKEN_CLOCK_TOLERANCE_SECONDS says), and no further', async () => {
    const call = api(localVars());
    expect((await call(await mint({ iat: nowS() - 600, exp: nowS() - 3 }))).status).toBe(200);
    expect((await call(await mint({ claims: { nbf: nowS() + 3 } }))).status).toBe(200);
    expect((await call(await mint({ iat: nowS() - 600, exp: nowS() - 8 }))).body).toEqual(
      refused('invalid_token', 'the access token expired'),
    );
    expect((await call(await mint({ claims: { nbf: nowS() + 8 } }))).body).toEqual(
      refused('invalid_token', 'the access token is not yet valid'),
    );
    const wider = api({ ...localVars(), TOKEN_CLOCK_TOLERANCE_SECONDS: '30' });
    expect((await wider(await mint({ iat: nowS() - 600, exp: nowS() - 20 }))).status).toBe(200);
    expect((await wider(await mint({ iat: nowS() - 600, exp: nowS() - 40 }))).body).toEqual(
      refused('invalid_token', 'the access token expired'),
    );
  });

  it('refuse a token issued in the future or living longer than TOKEN_MAX_LIFETIME_SECONDS', async () => {
    const call = api({ ...localVars(), TOKEN_MAX_LIFETIME_SECONDS: '900' });
    expect((await call(await mint({ iat: nowS() + 120, exp: nowS() + 600 }))).body).toEqual(
      refused('invalid_token', 'the access token was issued in the future'),
    );
    expect((await call(await mint({ exp: nowS() + 901 }))).body).toEqual(
      refused('invalid_token', 'the access token lives longer than the 900 s this API accepts'),
    );
    expect((await call(await mint({ exp: nowS() + 900 }))).status).toBe(200);
  });

  it('refuse a token without a uuid organization or a client id', async () => {
    const call = api(localVars());
    for (const org of [undefined, 'org-a', 42]) {
      expect((await call(await mint({ claims: { org } }))).body).toEqual(
        refused('invalid_token', 'the access token has no valid org claim'),
      );
    }
    for (const client_id of [undefined, '', 7]) {
      expect((await call(await mint({ claims: { client_id } }))).body).toEqual(
        refused('invalid_token', 'the access token has no client_id claim'),
      );
    }
    // azp stands in for client_id only for an external provider's tokens.
    expect((await call(await mint({ claims: { client_id: undefined, azp: 'client-a' } }))).body).toEqual(
      refused('invalid_token', 'the access token has no client_id claim'),
    );
  });

  it('refuse a token whose client is unregistered, disabled or registered to another organization', async () => {
    const call = api(localVars());
    for (const claims of [{ client_id: 'ghost' }, { client_id: 'off' }, { client_id: 'client-b' }]) {
      expect((await call(await mint({ claims }))).body).toEqual(refused('invalid_token', REVOKED));
    }
  });

  it('refuse a token without the webapi scope as insufficient_scope', async () => {
    const res = await api(localVars())(await mint({ claims: { scope: 'webapi.write' } }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(refused('insufficient_scope', 'the access token lacks the webapi scope'));
    expect(res.challenge).toBe(
      'Bearer realm="webapi", error="insufficient_scope", error_description="the access token lacks the webapi scope", scope="webapi"',
    );
  });

  it('blame the edge, not the token, when the signing key is missing or unusable', async () => {
    const token = await mint();
    for (const AUTH_SIGNING_KEY of [undefined, '', '{"kty":"EC"}']) {
      const res = await api({ ...localVars(), AUTH_SIGNING_KEY })(token);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'server_error', error_description: 'the token signing key is not usable' });
    }
  });
});

describe('allowed networks', () => {
  const office = () => mint({ claims: { client_id: 'office', scope: 'webapi' } });
  const outside = (address: string) =>
    `client office may be used only from its allowed networks, and this request comes from ${address}`;

  it("serve a client with networks from a source inside them, the caller carrying the front's address", async () => {
    const call = api(localVars());
    for (const [sent, address] of [
      ['203.0.113.9', '203.0.113.9'],
      ['2001:DB8:7::1', '2001:db8:7::1'],
      ['::ffff:203.0.113.200', '203.0.113.200'],
    ]) {
      expect(await call(await office(), '?address', { address: sent }), sent).toMatchObject({
        status: 200,
        body: { clientId: 'office', organizationId: ORG_A, scopes: ['webapi'], address },
      });
    }
  });

  it('refuse it from any other source with the rule and its own address, never the networks: v1 403, v2 Forbidden', async () => {
    const call = api(localVars());
    const token = await office();
    expect(await call(token, '', { address: '198.51.100.1' })).toEqual({
      status: 403,
      challenge: null,
      body: { errorType: 'Forbidden', errorCode: 'Forbidden', errorDescription: outside('198.51.100.1') },
    });
    const v2 = await call(token, '', { address: '2001:db9::1', path: '/api/v2/PF4/caller' });
    expect(v2).toMatchObject({
      status: 200,
      body: { data: null, error: { code: 'Forbidden', managerCode: null, message: outside('2001:db9::1') } },
    });
    expect(JSON.stringify(v2.body)).not.toContain('203.0.113.0');
  });

  it('refuse it where the source is not known: the local socket, or a front naming none or no address', async () => {
    const call = api(localVars());
    const token = await office();
    const unknown =
      "client office may be used only from its allowed networks, and this request's source address is not known (only Cloudflare's front names it)";
    // A caller on the socket cannot name its own source: the header is not believed without the front.
    const res = await app_local(token, '203.0.113.9');
    expect(res).toEqual({ status: 403, errorDescription: unknown });
    for (const address of [null, 'office.example'])
      expect((await call(token, '', { address })).body, String(address)).toMatchObject({ errorDescription: unknown });
  });

  it('hold every other client to nothing, and give the address to the caller wherever it comes from', async () => {
    const call = api(localVars());
    const token = await mint();
    expect((await call(token, '?address', { address: '198.51.100.1' })).body).toMatchObject({
      clientId: 'client-a',
      address: '198.51.100.1',
    });
    expect((await call(token, '?address')).body).toMatchObject({ clientId: 'client-a', address: null });
  });

  /** A request on the local socket (no `request.cf`) that sends CF-Connecting-IP itself. */
  async function app_local(authorization: string, spoofed: string) {
    const app = new Hono<AppEnv>();
    app.use('/api/*', requireToken());
    app.get('/api/caller', (c) => c.json({}));
    const res = await app.request(
      '/api/caller',
      { headers: { authorization, 'cf-connecting-ip': spoofed } },
      { DB: registry.db, REGISTRY_CACHE_SECONDS: '0', ...localVars() },
    );
    const body = await res.json<{ errorDescription?: string }>();
    return { status: res.status, errorDescription: body.errorDescription };
  }
});

describe('external identity provider', () => {
  let server: Server;
  let jwks: { keys: JWK[] } | string = { keys: [] };
  let duplicated: { keys: JWK[] } = { keys: [] };
  const hanging: ServerResponse[] = [];
  let rsaKey: CryptoKey;
  let ecKey: CryptoKey;
  let base: string;
  const PROVIDER = 'https://idp.example.test/';

  beforeAll(async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    rsaKey = rsa.privateKey;
    ecKey = ec.privateKey;
    jwks = {
      keys: [
        { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256' },
        { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256' },
      ],
    };
    server = createServer((req, res) => {
      if (req.url === '/hang') {
        hanging.push(res);
        return;
      } // never answered: the fetch times out
      if (req.url === '/duplicated') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(duplicated));
        return;
      }
      if (req.url === '/broken') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": 7}');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(typeof jwks === 'string' ? jwks : JSON.stringify(jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  const externalVars = (path = '/keys'): Partial<Env> => ({
    AUTH_ISSUER: PROVIDER,
    AUTH_JWKS_URL: `${base}${path}`,
    AUTH_AUDIENCE: 'api://gateway',
    AUTH_ORG_CLAIM: 'tenant',
  });
  const provided = (claims: JWTPayload, kid = 'rsa-1') =>
    mint({
      claims: { org: undefined, client_id: undefined, scope: undefined, ...claims },
      header: { kid, typ: 'JWT' },
      key: kid === 'ec-1' ? ecKey : rsaKey,
      alg: kid === 'ec-1' ? 'ES256' : 'RS256',
      issuer: PROVIDER,
      audience: 'api://gateway',
    });

  it('takes an unregistered client as the provider states it: organization from the configured claim, client from azp, scopes from scp', async () => {
    const call = api(externalVars());
    const res = await call(
      await provided({ tenant: ORG_B.toUpperCase(), azp: 'spa-client', scp: ['webapi', 'webapi.admin'] }),
    );
    expect(res).toMatchObject({
      status: 200,
      body: { clientId: 'spa-client', organizationId: ORG_B, scopes: ['webapi', 'webapi.admin'] },
    });
    // client_id wins over azp; ES256 keys are accepted too.
    expect(
      (await call(await provided({ tenant: ORG_B, client_id: 'svc', azp: 'spa-client', scope: 'webapi' }, 'ec-1')))
        .body,
    ).toEqual({ clientId: 'svc', organizationId: ORG_B, scopes: ['webapi'] });
  });

  it('holds a client it also registers here to that registration', async () => {
    const call = api(externalVars());
    expect(
      (await call(await provided({ tenant: ORG_A, client_id: 'reader', scope: 'webapi webapi.write' }))).body,
    ).toEqual({ clientId: 'reader', organizationId: ORG_A, scopes: ['webapi'] });
    expect((await call(await provided({ tenant: ORG_B, client_id: 'reader', scope: 'webapi' }))).body).toEqual(
      refused('invalid_token', REVOKED),
    );
    expect((await call(await provided({ tenant: ORG_A, client_id: 'off', scope: 'webapi' }))).body).toEqual(
      refused('invalid_token', REVOKED),
    );
  });

  it("refuses the provider's tokens without the organization claim or a client, and tokens signed by unknown keys", async () => {
    const call = api(externalVars());
    expect((await call(await provided({ org: ORG_A, client_id: 'svc', scope: 'webapi' }))).body).toEqual(
      refused('invalid_token', 'the access token has no valid tenant claim'),
    );
    expect((await call(await provided({ tenant: ORG_A, scope: 'webapi' }))).body).toEqual(
      refused('invalid_token', 'the access token has no client_id claim'),
    );
    expect((await call(await provided({ tenant: ORG_A, azp: '', scope: 'webapi' }))).body).toEqual(
      refused('invalid_token', 'the access token has no client_id claim'),
    );
    expect(
      (await call(await provided({ tenant: ORG_A, client_id: 'svc', scope: 'webapi' }, 'rsa-unknown'))).body,
    ).toEqual(refused('invalid_token', 'the access token is signed by an unknown key'));
    // A locally signed token is not the provider's: its key is not in the provider's set.
    expect((await call(await mint())).body).toEqual(
      refused('invalid_token', 'the access token is signed by an unknown key'),
    );
    // A provider-signed token for another issuer or audience.
    expect(
      (
        await call(
          await mint({
            claims: { tenant: ORG_A, client_id: 'svc' },
            key: rsaKey,
            alg: 'RS256',
            header: { kid: 'rsa-1' },
            issuer: 'https://idp.example.test',
            audience: 'api://gateway',
          }),
        )
      ).body,
    ).toEqual(refused('invalid_token', 'the access token has an unexpected issuer'));
    expect(
      (
        await call(
          await mint({
            claims: { tenant: ORG_A, client_id: 'svc' },
            key: rsaKey,
            alg: 'RS256',
            header: { kid: 'rsa-1' },
            issuer: PROVIDER,
            audience: 'webapi',
          }),
        )
      ).body,
    ).toEqual(refused('invalid_token', 'the access token has an unexpected audience'));
  });

  it('refuses a token whose key id matches several published keys, none of which verifies it', async () => {
    // Two published keys under one kid; the token is signed by a third, the provider's own (not published here).
    const keys = await Promise.all([1, 2].map(() => generateKeyPair('RS256', { extractable: true })));
    duplicated = {
      keys: await Promise.all(keys.map(async (k) => ({ ...(await exportJWK(k.publicKey)), kid: 'dup', alg: 'RS256' }))),
    };
    const token = await mint({
      claims: { tenant: ORG_A, client_id: 'svc', scope: 'webapi' },
      header: { kid: 'dup', typ: 'JWT' },
      key: rsaKey,
      alg: 'RS256',
      issuer: PROVIDER,
      audience: 'api://gateway',
    });
    const res = await api(externalVars('/duplicated'))(token);
    expect([res.status, res.body]).toEqual([401, refused('invalid_token', 'the access token is invalid')]);
  });

  it('answers 503 when the provider does not answer for its keys in time', async () => {
    const token = await provided({ tenant: ORG_A, client_id: 'svc', scope: 'webapi' });
    // A short fetch bound (AUTH_JWKS_TIMEOUT_MS, 5 s by default) makes the same time-out as the default one.
    const res = await api({ ...externalVars('/hang'), AUTH_JWKS_TIMEOUT_MS: '200' })(token);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the identity provider keys could not be fetched',
    });
  });

  it("answers 503 when the provider's keys cannot be fetched or read", async () => {
    const token = await provided({ tenant: ORG_A, client_id: 'svc', scope: 'webapi' });
    for (const vars of [externalVars('/broken'), { ...externalVars(), AUTH_JWKS_URL: 'http://127.0.0.1:9/keys' }]) {
      const res = await api(vars)(token);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'the identity provider keys could not be fetched',
      });
    }
  });
});
