/**
 * The local issuer's routes (token endpoint, discovery, JWKS) run in this process over a real D1 registry with the
 * token endpoint's limits off: what a token request is granted and signed with, each RFC 6749 §5.2 refusal, the
 * bounded body, and the 404 naming the real issuer in external identity provider mode. With the limits on, over
 * counter objects kept in this process: which requests hash a secret and which counters they reach.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { AppEnv, Env } from '../env.js';
import { authRoutes } from './authRoutes.js';
import { hashSecret } from '../../shared/secrets.js';
import { KeyedWindows, type Limit } from '../limits/quota.js';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';

const ORG = randomUUID();
const ISSUER = 'https://gw.example.test';
let registry: RegistryDb;
let jwk: JWK;

async function client(
  clientId: string,
  secret: string,
  fields: { scopes?: string; disabled?: number; grants?: string } = {},
) {
  const hashed = await hashSecret(secret, 1000);
  await registry.db
    .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, grant_types, scopes, created)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(
      clientId,
      ORG,
      clientId,
      hashed.hash,
      hashed.salt,
      hashed.iterations,
      fields.disabled ?? 0,
      fields.grants ?? 'client_credentials',
      fields.scopes ?? 'webapi webapi.write webapi.admin',
      new Date().toISOString(),
    )
    .run();
}

beforeAll(async () => {
  registry = await startRegistryDb();
  await registry.db
    .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
    .bind(ORG, 'Org', new Date().toISOString())
    .run();
  await client('full', 'full-secret');
  await client('writer', 'writer-secret', { scopes: 'webapi webapi.write' });
  await client('off', 'off-secret', { disabled: 1 });
  await client('nogrant', 'nogrant-secret', { grants: '' });
  jwk = { ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)), kid: 'k1' };
}, 60_000);
afterAll(async () => {
  await registry?.close();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function edge(vars: Partial<Env> = {}) {
  const app = new Hono<AppEnv>().route('/', authRoutes());
  const env = {
    DB: registry.db,
    TOKEN_RATE_LIMIT: '0',
    TOKEN_FAILURE_LIMIT: '0',
    TOKEN_VERIFY_LIMIT: '0',
    AUTH_SIGNING_KEY: JSON.stringify(jwk),
    PUBLIC_URL: `${ISSUER}/`,
    TOKEN_TTL_SECONDS: '600',
    ...vars,
  } as unknown as Env;
  return async (path: string, init: RequestInit = {}) => {
    const res = await app.request(path, init, env);
    const text = await res.text();
    return { res, status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
  };
}

const token = (fields: Record<string, string>, headers: Record<string, string> = FORM, vars: Partial<Env> = {}) =>
  edge(vars)('/connect/token', { method: 'POST', headers, body: new URLSearchParams(fields).toString() });
const error = (code: string, description: string) => ({ error: code, error_description: description });

describe('token endpoint', () => {
  it('issues an ES256 at+jwt for the client, never cached', async () => {
    const { res, status, body } = await token({
      grant_type: 'client_credentials',
      client_id: 'writer',
      client_secret: 'writer-secret',
    });
    expect(status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'webapi webapi.write' });
    const jwt = body.access_token as string;
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    const claims = decodeJwt(jwt);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: 'webapi',
      sub: 'writer',
      client_id: 'writer',
      org: ORG,
      scope: 'webapi webapi.write',
    });
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(claims.nbf).toBe(claims.iat);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(120);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('grants every held scope for no scope or webapi alone, else the requested held ones plus webapi', async () => {
    const post = { grant_type: 'client_credentials', client_id: 'writer', client_secret: 'writer-secret' };
    const scopeOf = async (scope?: string) => (await token(scope === undefined ? post : { ...post, scope })).body.scope;
    expect(await scopeOf()).toBe('webapi webapi.write');
    expect(await scopeOf('')).toBe('webapi webapi.write');
    expect(await scopeOf('webapi')).toBe('webapi webapi.write');
    expect(await scopeOf('webapi.write')).toBe('webapi webapi.write');
    expect(await scopeOf('webapi.admin')).toBe('webapi');
    expect(await scopeOf('webapi webapi.admin')).toBe('webapi');
    const full = { grant_type: 'client_credentials', client_id: 'full', client_secret: 'full-secret' };
    expect((await token({ ...full, scope: 'webapi.admin  webapi' })).body.scope).toBe('webapi webapi.admin');
    expect((await token({ ...full, scope: 'webapi.write' })).body.scope).toBe('webapi webapi.write');
    expect((await token(full)).body.scope).toBe('webapi webapi.write webapi.admin');
  });

  it('caps the lifetime at TOKEN_MAX_LIFETIME_SECONDS', async () => {
    const { body } = await token(
      { grant_type: 'client_credentials', client_id: 'full', client_secret: 'full-secret' },
      FORM,
      { TOKEN_MAX_LIFETIME_SECONDS: '120' },
    );
    expect(body.expires_in).toBe(120);
    const claims = decodeJwt(body.access_token as string);
    expect(claims.exp! - claims.iat!).toBe(120);
  });

  it('refuses a malformed request before looking at the client', async () => {
    const ok = { grant_type: 'client_credentials', client_id: 'full', client_secret: 'full-secret' };
    expect((await token(ok, { 'content-type': 'application/json' })).body).toEqual(
      error('invalid_request', 'the request body must be application/x-www-form-urlencoded'),
    );
    expect((await token(ok, {})).status).toBe(400);
    expect((await token(ok, { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' })).status).toBe(200);
    expect((await token(ok, { 'content-type': 'application/x-www-form-urlencoded ; charset=utf-8' })).status).toBe(200);
    expect((await token({ ...ok, grant_type: '' })).body).toEqual(error('invalid_request', 'grant_type is required'));
    expect((await token({ client_id: 'full', client_secret: 'full-secret' })).body).toEqual(
      error('invalid_request', 'grant_type is required'),
    );
    expect((await token({ ...ok, grant_type: 'password' })).body).toEqual(
      error('unsupported_grant_type', 'only grant_type client_credentials is supported'),
    );
    expect((await token({ ...ok, scope: 'webapi webapi.root all' })).body).toEqual(
      error(
        'invalid_scope',
        'unknown scope webapi.root, all: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
      ),
    );
    const repeated = await edge()('/connect/token', {
      method: 'POST',
      headers: FORM,
      body: 'grant_type=client_credentials&client_id=full&client_id=full&client_secret=full-secret',
    });
    expect(repeated.body).toEqual(error('invalid_request', 'parameter client_id is repeated'));
  });

  it('refuses a body over 4096 bytes, announced or not', async () => {
    const pad = 'x'.repeat(4096);
    const big = `grant_type=client_credentials&client_id=full&client_secret=full-secret&pad=${pad}`;
    expect((await edge()('/connect/token', { method: 'POST', headers: FORM, body: big })).body).toEqual(
      error('invalid_request', 'the request body is too large'),
    );
    const exact = `grant_type=client_credentials&client_id=full&client_secret=full-secret&pad=`;
    const fits = exact + 'x'.repeat(4096 - exact.length);
    expect(new TextEncoder().encode(fits).byteLength).toBe(4096);
    expect((await edge()('/connect/token', { method: 'POST', headers: FORM, body: fits })).status).toBe(200);
    expect(
      (await edge()('/connect/token', { method: 'POST', headers: { ...FORM, 'content-length': '4096' }, body: fits }))
        .status,
    ).toBe(200);
    // Streamed in chunks without a length: read up to the limit, no further.
    const chunks = [new TextEncoder().encode('grant_type=client_credentials&'), new TextEncoder().encode(`pad=${pad}`)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const streamed = await edge()('/connect/token', {
      method: 'POST',
      headers: FORM,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.body).toEqual(error('invalid_request', 'the request body is too large'));
    // A body in several chunks within the limit is read whole, in order.
    const parts = ['grant_type=client_cred', 'entials&client_id=wri', 'ter&client_secret=writer-secret'].map((p) =>
      new TextEncoder().encode(p),
    );
    const inParts = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const whole = await edge()('/connect/token', {
      method: 'POST',
      headers: FORM,
      body: inParts,
      duplex: 'half',
    } as RequestInit);
    expect(whole.status).toBe(200);
    expect(decodeJwt(whole.body.access_token as string).client_id).toBe('writer');
    const announced = await edge()('/connect/token', {
      method: 'POST',
      headers: { ...FORM, 'content-length': '4097' },
      body: 'grant_type=client_credentials',
    });
    expect(announced.body).toEqual(error('invalid_request', 'the request body is too large'));
  });

  it('answers unknown, disabled and wrong-secret clients alike, with a Basic challenge after Basic', async () => {
    const basic = (id: string, secret: string) => ({ ...FORM, authorization: `Basic ${btoa(`${id}:${secret}`)}` });
    const failed = error('invalid_client', 'client authentication failed');
    for (const [id, secret] of [
      ['ghost', 'x'],
      ['off', 'off-secret'],
      ['full', 'wrong'],
    ]) {
      const post = await token({ grant_type: 'client_credentials', client_id: id, client_secret: secret });
      expect([post.status, post.body, post.res.headers.get('www-authenticate')]).toEqual([401, failed, null]);
      const viaBasic = await token({ grant_type: 'client_credentials' }, basic(id, secret));
      expect([viaBasic.status, viaBasic.body, viaBasic.res.headers.get('www-authenticate')]).toEqual([
        401,
        failed,
        'Basic realm="webapi", charset="UTF-8"',
      ]);
    }
    expect((await token({ grant_type: 'client_credentials' }, basic('full', 'full-secret'))).status).toBe(200);
    const none = await token({ grant_type: 'client_credentials' });
    expect([none.status, none.body, none.res.headers.get('www-authenticate')]).toEqual([
      401,
      error('invalid_client', 'client authentication is required'),
      null,
    ]);
    const half = await token({ grant_type: 'client_credentials', client_id: 'full' });
    expect(half.body).toEqual(failed);
    const both = await token(
      { grant_type: 'client_credentials', client_secret: 'full-secret' },
      basic('full', 'full-secret'),
    );
    expect(both.body).toEqual(
      error(
        'invalid_request',
        'use exactly one client authentication method: client_secret_basic or client_secret_post',
      ),
    );
  });

  it('refuses a client not allowed client_credentials as unauthorized_client', async () => {
    const { status, body } = await token({
      grant_type: 'client_credentials',
      client_id: 'nogrant',
      client_secret: 'nogrant-secret',
    });
    expect(status).toBe(400);
    expect(body).toEqual(
      error('unauthorized_client', 'the client is not allowed to use grant_type client_credentials'),
    );
  });

  it('answers server_error without a usable signing key', async () => {
    const ok = { grant_type: 'client_credentials', client_id: 'full', client_secret: 'full-secret' };
    const missing = await token(ok, FORM, { AUTH_SIGNING_KEY: '' });
    expect([missing.status, missing.body]).toEqual([
      500,
      error('server_error', 'the token signing key is not configured'),
    ]);
    const broken = await token(ok, FORM, { AUTH_SIGNING_KEY: '{"kty":"EC","crv":"P-256"}' });
    expect([broken.status, broken.body]).toEqual([500, error('server_error', 'the token signing key is not usable')]);
  });

  it('reads a POST without a body as an empty form', async () => {
    const { status, body } = await edge()('/connect/token', { method: 'POST', headers: FORM });
    expect([status, body]).toEqual([400, error('invalid_request', 'grant_type is required')]);
  });

  it('accepts POST only', async () => {
    const { res, status, body } = await edge()('/connect/token');
    expect(status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(body).toEqual(error('invalid_request', 'the token endpoint accepts POST only'));
  });
});

describe('token endpoint limits', () => {
  /**
   * A fresh copy of the endpoint (its isolate state: leases, timings) over counter objects kept here, each counting
   * its keys with the rate limiter's own windows; `names` lists every counter object the endpoint reached (the
   * failures of every source in one object, `token-fail#0`, of TOKEN_FAILURE_SHARDS 1).
   */
  async function limitedEdge(vars: Record<string, string>) {
    vi.resetModules();
    const { authRoutes: freshRoutes } = await import('./authRoutes.js');
    const windows = new Map<string, KeyedWindows>();
    const RATE_LIMITER = {
      idFromName: (name: string) => name,
      get: (name: string) => ({
        take: (want: number, limit: Limit, key = '') => {
          if (!windows.has(name)) windows.set(name, new KeyedWindows());
          return Promise.resolve(windows.get(name)!.take(key, want, limit.limit, limit.windowMs, Date.now()).grant);
        },
      }),
    };
    const app = new Hono<AppEnv>().route('/', freshRoutes());
    const env = {
      DB: registry.db,
      AUTH_SIGNING_KEY: JSON.stringify(jwk),
      PUBLIC_URL: ISSUER,
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      TOKEN_FAILURE_SHARDS: '1',
      RATE_LIMITER,
      ...vars,
    } as unknown as Env;
    const ask = async (clientId: string, secret: string) => {
      const res = await app.request(
        '/connect/token',
        {
          method: 'POST',
          headers: FORM,
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: clientId,
            client_secret: secret,
          }).toString(),
        },
        env,
      );
      return { res, status: res.status, body: await res.json<Record<string, unknown>>() };
    };
    return { ask, names: () => [...windows.keys()].sort() };
  }
  /** Counts the PBKDF2 derivations run in this process from now on. */
  const countHashing = () => vi.spyOn(crypto.subtle, 'deriveBits');
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("spends a client's token budget only with its right secret: wrong secrets leave the holder's budget whole", async () => {
    const { ask, names } = await limitedEdge({
      TOKEN_RATE_LIMIT: '3',
      TOKEN_FAILURE_LIMIT: '0',
      TOKEN_VERIFY_LIMIT: '0',
    });
    const id = `limited-${randomUUID()}`;
    await client(id, 'limited-secret');
    for (let i = 0; i < 10; i++)
      expect((await ask(id, `wrong-${i}`)).body).toEqual(error('invalid_client', 'client authentication failed'));
    expect([
      (await ask(id, 'limited-secret')).status,
      (await ask(id, 'limited-secret')).status,
      (await ask(id, 'limited-secret')).status,
    ]).toEqual([200, 200, 200]);
    const refused = await ask(id, 'limited-secret');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.body).toEqual(
      error('too_many_requests', `too many token requests for this client; retry after ${retryAfter} s`),
    );
    expect(refused.res.headers.get('cache-control')).toBe('no-store');
    // A wrong secret past the budget is still just a wrong secret: the budget is the holder's.
    expect((await ask(id, 'wrong')).body).toEqual(error('invalid_client', 'client authentication failed'));
    expect((await ask('full', 'full-secret')).status).toBe(200);
    expect(names()).toEqual(['token:full', `token:${id}`]);
  });

  it('answers an unknown client id without hashing and without a counter object of its own', async () => {
    const { ask, names } = await limitedEdge({
      TOKEN_RATE_LIMIT: '100',
      TOKEN_FAILURE_LIMIT: '1000',
      TOKEN_VERIFY_LIMIT: '1000',
    });
    const hashing = countHashing();
    for (let i = 0; i < 25; i++) {
      const { status, body } = await ask(`invented-${randomUUID()}`, 'guess');
      expect([status, body]).toEqual([401, error('invalid_client', 'client authentication failed')]);
    }
    expect(hashing).toHaveBeenCalledTimes(0);
    // Only the source's failures and the edge's verification counter: no object per invented id.
    expect(names()).toEqual(['token-fail#0', 'token-verify:all']);
    // A registered id with a wrong secret, or disabled, is checked: one hash each.
    expect((await ask('full', 'wrong')).body).toEqual(error('invalid_client', 'client authentication failed'));
    expect((await ask('off', 'off-secret')).body).toEqual(error('invalid_client', 'client authentication failed'));
    expect(hashing).toHaveBeenCalledTimes(2);
    expect(names()).toEqual(['token-fail#0', 'token-verify:all']);
  });

  it("refuses a source past TOKEN_FAILURE_LIMIT failures before any work, and the failures never touch the client's budget", async () => {
    const { ask, names } = await limitedEdge({
      TOKEN_RATE_LIMIT: '100',
      TOKEN_FAILURE_LIMIT: '3',
      TOKEN_VERIFY_LIMIT: '1000',
    });
    expect([
      (await ask('full', 'wrong')).status,
      (await ask('ghost', 'x')).status,
      (await ask('off', 'off-secret')).status,
    ]).toEqual([401, 401, 401]);
    const fourth = await ask('full', 'wrong');
    expect(fourth.status).toBe(429);
    const retryAfter = Number(fourth.res.headers.get('retry-after'));
    expect(fourth.body).toEqual(
      error('too_many_requests', `too many failed token requests from this address; retry after ${retryAfter} s`),
    );
    const hashing = countHashing();
    // Now refused before the registry is read or a secret hashed, the right secret included.
    const right = await ask('full', 'full-secret');
    expect([right.status, right.body.error]).toEqual([429, 'too_many_requests']);
    expect((await ask('ghost', 'x')).status).toBe(429);
    expect(hashing).toHaveBeenCalledTimes(0);
    expect(names()).toEqual(['token-fail#0', 'token-verify:all']);
  });

  it('refuses registered and unknown ids alike once TOKEN_VERIFY_LIMIT verifications are spent, and logs it once', async () => {
    const { ask } = await limitedEdge({
      TOKEN_RATE_LIMIT: '100',
      TOKEN_FAILURE_LIMIT: '1000',
      TOKEN_VERIFY_LIMIT: '3',
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    // Unknown ids ask the budget but do not spend it.
    for (let i = 0; i < 5; i++) expect((await ask(`invented-${i}`, 'x')).status).toBe(401);
    expect([
      (await ask('full', 'full-secret')).status,
      (await ask('full', 'wrong')).status,
      (await ask('writer', 'writer-secret')).status,
    ]).toEqual([200, 401, 200]);
    const hashing = countHashing();
    const refusals = [
      await ask('full', 'full-secret'),
      await ask('off', 'off-secret'),
      await ask('ghost', 'x'),
      await ask('writer', 'wrong'),
    ];
    expect(hashing).toHaveBeenCalledTimes(0);
    for (const refused of refusals) {
      const retryAfter = Number(refused.res.headers.get('retry-after'));
      expect([refused.status, refused.body]).toEqual([
        429,
        error('too_many_requests', `too many token requests; retry after ${retryAfter} s`),
      ]);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(JSON.parse(warn.mock.calls[0][0] as string)).toMatchObject({
      level: 'warn',
      msg: 'token verification budget spent; token requests refused until the window ends',
      limit: 3,
      windowSeconds: 3600,
    });
  });
});

describe('discovery and keys', () => {
  it('describe the local issuer and publish its public key only', async () => {
    const discovery = await edge()('/.well-known/openid-configuration');
    expect(discovery.status).toBe(200);
    expect(discovery.res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(discovery.body).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/connect/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['webapi', 'webapi.write', 'webapi.admin', 'webapi.audit', 'webapi.webhooks'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      access_token_signing_alg_values_supported: ['ES256'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'scope', 'client_id', 'org'],
    });
    const keys = await edge()('/.well-known/jwks.json');
    expect(keys.res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(keys.body).toEqual({
      keys: [{ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: 'k1', alg: 'ES256', use: 'sig' }],
    });
    expect((await edge({ AUTH_SIGNING_KEY: '' })('/.well-known/jwks.json')).body).toEqual({ keys: [] });
    expect((await edge({ AUTH_SIGNING_KEY: 'not json' })('/.well-known/jwks.json')).body).toEqual({ keys: [] });
  });

  it('answer 404 naming the real issuer in external identity provider mode', async () => {
    const external = { AUTH_ISSUER: 'https://idp.example.test/', AUTH_JWKS_URL: 'https://idp.example.test/keys' };
    for (const [path, init] of [
      ['/connect/token', { method: 'POST', headers: FORM, body: 'grant_type=client_credentials' }],
      ['/connect/token', {}],
      ['/.well-known/openid-configuration', {}],
      ['/.well-known/jwks.json', {}],
    ] as [string, RequestInit][]) {
      const { status, body } = await edge(external)(path, init);
      expect([status, body]).toEqual([404, error('not_found', 'tokens are issued by https://idp.example.test/')]);
    }
  });
});
