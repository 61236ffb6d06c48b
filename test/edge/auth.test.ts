/**
 * The local issuer and the Bearer middleware through the real worker in workerd: the client-credentials token
 * endpoint (both client authentication methods, every RFC 6749 §5.2 error), discovery and JWKS, and every way a
 * Bearer token can fail (RFC 6750), including algorithm confusion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  base64url,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportSPKI,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
} from 'jose';
import { AUDIENCE, generateSigningKey, ORG_A, ORG_B, startTestEdge, type TestEdge } from '../support/edge.js';

const SECRET = 'p@ss:w+rd %20 ü';
const TTL = 900;
let edge: TestEdge;

beforeAll(async () => {
  edge = await startTestEdge({ vars: { TOKEN_TTL_SECONDS: String(TTL) } });
  await edge.seedClient('client-a', SECRET, ORG_A);
  await edge.seedClient('client-b', 'secret-b', ORG_B);
  await edge.seedClient('client-off', 'secret-off', ORG_A);
  await edge.seedClient('client-nogrant', 'secret-nogrant', ORG_A);
  const db = await edge.db();
  await db.prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind('client-off').run();
  await db.prepare("UPDATE api_clients SET grant_types = '' WHERE client_id = ?").bind('client-nogrant').run();
});
afterAll(async () => {
  await edge?.close();
});

const at = (path: string) => new URL(path, edge.url).href;
/** RFC 6749 §2.3.1: id and secret are form-urlencoded, then joined with a colon and base64-encoded. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
const basic = (id: string, secret: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${formEncode(id)}:${formEncode(secret)}`)))}`;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function tokenRequest(body: string | Record<string, string>, headers: Record<string, string> = FORM) {
  const res = await fetch(at('/connect/token'), {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : new URLSearchParams(body).toString(),
  });
  return { res, body: (await res.json()) as Record<string, unknown> };
}

async function api(authorization?: string, path = '/api/Organizations') {
  const res = await fetch(at(path), { headers: authorization ? { authorization } : {} });
  return { res, body: (await res.json()) as Record<string, unknown>, challenge: res.headers.get('www-authenticate') };
}

describe('token endpoint', () => {
  it('issues an ES256 at+jwt for client_secret_basic with form-urlencoded credentials', async () => {
    const { res, body } = await tokenRequest(
      { grant_type: 'client_credentials', scope: 'webapi' },
      { ...FORM, authorization: basic('client-a', SECRET) },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: TTL, scope: 'webapi' });
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);

    const token = body.access_token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: edge.privateJwk.kid, typ: 'at+jwt' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: edge.issuer,
      aud: AUDIENCE,
      scope: 'webapi',
      client_id: 'client-a',
      sub: 'client-a',
      org: ORG_A,
    });
    expect(claims.exp! - claims.iat!).toBe(TTL);
    expect(claims.nbf).toBe(claims.iat);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(30);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);

    // Verifiable by anyone with the published key set alone.
    const jwks = (await (await fetch(at('/.well-known/jwks.json'))).json()) as { keys: JWK[] };
    const verified = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: edge.issuer,
      audience: AUDIENCE,
      algorithms: ['ES256'],
    });
    expect(verified.payload.org).toBe(ORG_A);
  });

  it('issues for client_secret_post without a scope, and the token opens the API as its organization', async () => {
    const { res, body } = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: 'client-b',
      client_secret: 'secret-b',
    });
    expect(res.status).toBe(200);
    const claims = decodeJwt(body.access_token as string);
    expect(claims).toMatchObject({ client_id: 'client-b', org: ORG_B, scope: 'webapi' });
    const jtiA = claims.jti;
    const again = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: 'client-b',
      client_secret: 'secret-b',
    });
    expect(decodeJwt(again.body.access_token as string).jti).not.toBe(jtiA);

    const orgs = await api(`Bearer ${body.access_token as string}`);
    expect(orgs.res.status).toBe(200);
    expect((orgs.body as unknown as Array<{ id: string }>).map((o) => o.id)).toEqual([ORG_B]);
  });

  it('answers every RFC 6749 §5.2 error with its code, status and no-store', async () => {
    const grant = { grant_type: 'client_credentials' };
    const post = { ...grant, client_id: 'client-a', client_secret: SECRET };
    const cases: Array<[string, Promise<{ res: Response; body: Record<string, unknown> }>, number, string]> = [
      ['json body', tokenRequest(JSON.stringify(post), { 'content-type': 'application/json' }), 400, 'invalid_request'],
      ['no content type', tokenRequest(new URLSearchParams(post).toString(), {}), 400, 'invalid_request'],
      ['missing grant_type', tokenRequest({ client_id: 'client-a', client_secret: SECRET }), 400, 'invalid_request'],
      [
        'empty grant_type',
        tokenRequest({ grant_type: '', client_id: 'client-a', client_secret: SECRET }),
        400,
        'invalid_request',
      ],
      [
        'repeated parameter',
        tokenRequest(`${new URLSearchParams(post)}&grant_type=client_credentials`),
        400,
        'invalid_request',
      ],
      [
        'two client authentication methods',
        tokenRequest(post, { ...FORM, authorization: basic('client-a', SECRET) }),
        400,
        'invalid_request',
      ],
      ['password grant', tokenRequest({ ...post, grant_type: 'password' }), 400, 'unsupported_grant_type'],
      [
        'authorization_code grant',
        tokenRequest({ ...post, grant_type: 'authorization_code' }),
        400,
        'unsupported_grant_type',
      ],
      ['other scope', tokenRequest({ ...post, scope: 'admin' }), 400, 'invalid_scope'],
      ['extra scope', tokenRequest({ ...post, scope: 'webapi admin' }), 400, 'invalid_scope'],
      ['no client authentication', tokenRequest(grant), 401, 'invalid_client'],
      ['client_id without secret', tokenRequest({ ...grant, client_id: 'client-a' }), 401, 'invalid_client'],
      ['wrong secret (post)', tokenRequest({ ...post, client_secret: 'nope' }), 401, 'invalid_client'],
      ['unknown client (post)', tokenRequest({ ...post, client_id: 'nobody' }), 401, 'invalid_client'],
      [
        'disabled client (post)',
        tokenRequest({ ...grant, client_id: 'client-off', client_secret: 'secret-off' }),
        401,
        'invalid_client',
      ],
      [
        'client without the grant',
        tokenRequest({ ...grant, client_id: 'client-nogrant', client_secret: 'secret-nogrant' }),
        400,
        'unauthorized_client',
      ],
    ];
    for (const [name, pending, status, error] of cases) {
      const { res, body } = await pending;
      expect({ name, status: res.status, error: body.error }).toEqual({ name, status, error });
      expect(typeof body.error_description, name).toBe('string');
      expect(res.headers.get('cache-control'), name).toBe('no-store');
      expect(res.headers.get('pragma'), name).toBe('no-cache');
      expect(res.headers.get('www-authenticate'), name).toBeNull();
    }
  });

  it('answers unknown, disabled and wrong-secret clients identically, with a Basic challenge after Basic', async () => {
    const attempts = [
      basic('client-a', 'wrong'),
      basic('nobody', 'x'),
      basic('client-off', 'secret-off'),
      'Basic !!notbase64',
      'Basic ' + btoa('no-colon'),
    ];
    const answers = [];
    for (const authorization of attempts) {
      const { res, body } = await tokenRequest({ grant_type: 'client_credentials' }, { ...FORM, authorization });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="webapi"/);
      answers.push(body);
    }
    expect(answers[0]).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    // A raw `+` in Basic credentials is a form-encoded space, so the unencoded secret does not match.
    const raw = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`client-a:${SECRET}`)))}`;
    expect((await tokenRequest({ grant_type: 'client_credentials' }, { ...FORM, authorization: raw })).res.status).toBe(
      401,
    );
  });

  it('answers unknown, disabled and wrong-secret clients byte for byte alike, headers included', async () => {
    const raw = async (init: RequestInit) => {
      const res = await fetch(at('/connect/token'), { method: 'POST', ...init });
      // Every answer has its own date and trace; nothing else may differ.
      const headers = [...res.headers].filter(([name]) => name !== 'date' && name !== 'traceparent');
      return { status: res.status, headers, body: await res.text() };
    };
    const grant = { grant_type: 'client_credentials' };
    for (const method of ['post', 'basic'] as const) {
      const ask = (id: string, secret: string) =>
        raw(
          method === 'post'
            ? { headers: FORM, body: new URLSearchParams({ ...grant, client_id: id, client_secret: secret }) }
            : { headers: { ...FORM, authorization: basic(id, secret) }, body: new URLSearchParams(grant) },
        );
      const answers = [
        await ask('nobody-at-all', 'x'),
        await ask('client-off', 'secret-off'),
        await ask('client-a', 'wrong'),
      ];
      expect(answers[0].status, method).toBe(401);
      expect(JSON.parse(answers[0].body)).toEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
      expect(answers[1], method).toEqual(answers[0]);
      expect(answers[2], method).toEqual(answers[0]);
    }
  });

  it('refuses an oversized body unread', async () => {
    const { res, body } = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: 'client-a',
      client_secret: SECRET,
      pad: 'x'.repeat(5000),
    });
    expect(res.status).toBe(400);
    expect(body).toEqual({ error: 'invalid_request', error_description: 'the request body is too large' });
  });

  it('accepts POST only', async () => {
    const res = await fetch(at('/connect/token'));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('discovery and keys', () => {
  it('describes the local issuer', async () => {
    const res = await fetch(at('/.well-known/openid-configuration'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: edge.issuer,
      token_endpoint: `${edge.issuer}/connect/token`,
      jwks_uri: `${edge.issuer}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['webapi', 'webapi.write', 'webapi.admin', 'webapi.audit', 'webapi.webhooks'],
      response_types_supported: ['token'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
  });

  it('publishes only the public half of the signing key', async () => {
    const res = await fetch(at('/.well-known/jwks.json'));
    const text = await res.text();
    const { keys } = JSON.parse(text) as { keys: JWK[] };
    const { kty, crv, x, y, kid } = edge.privateJwk;
    expect(keys).toEqual([{ kty, crv, x, y, kid, alg: 'ES256', use: 'sig' }]);
    expect(text).not.toContain(edge.privateJwk.d!);
    expect(keys[0]).not.toHaveProperty('d');
  });
});

describe('Bearer tokens on /api/*', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const baseClaims = (): JWTPayload => ({
    iss: edge.issuer,
    aud: AUDIENCE,
    scope: 'webapi',
    client_id: 'client-a',
    org: ORG_A,
    iat: now(),
    nbf: now(),
    exp: now() + 600,
  });
  async function sign(claims: JWTPayload, header: Record<string, unknown> = {}, jwk: JWK = edge.privateJwk) {
    const key = await importJWK(jwk, 'ES256');
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt', ...header }).sign(key);
  }
  async function expectInvalid(token: string, description: RegExp) {
    const { res, body, challenge } = await api(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(body.error).toBe('invalid_token');
    expect(body.error_description).toMatch(description);
    expect(challenge).toBe(
      `Bearer realm="webapi", error="invalid_token", error_description="${body.error_description as string}"`,
    );
  }

  it('accepts a valid token and scopes the caller to its organization', async () => {
    const { res, body } = await api(`Bearer ${await edge.token()}`);
    expect(res.status).toBe(200);
    expect(body as unknown as Array<{ id: string; name: string }>).toEqual([
      expect.objectContaining({ id: ORG_A, name: 'Org A' }),
    ]);
  });

  it('challenges a request without credentials, without an error code', async () => {
    for (const authorization of [undefined, 'Basic Y2xpZW50LWE6eA==']) {
      const { res, body, challenge } = await api(authorization);
      expect(res.status).toBe(401);
      expect(challenge).toBe('Bearer realm="webapi"');
      expect(body.error).toBe('invalid_token');
    }
  });

  it('refuses a malformed Authorization header as invalid_request', async () => {
    for (const authorization of ['Bearer', 'Bearer a b', 'Bearer ä']) {
      const { res, body, challenge } = await api(authorization);
      expect(res.status).toBe(400);
      expect(body.error).toBe('invalid_request');
      expect(challenge).toMatch(/^Bearer realm="webapi", error="invalid_request"/);
    }
  });

  it('refuses malformed, expired, not-yet-valid, foreign-issuer and foreign-audience tokens', async () => {
    await expectInvalid('abc.def.ghi', /malformed/);
    await expectInvalid('not-a-jwt', /malformed/);
    await expectInvalid(await sign({ ...baseClaims(), exp: now() - 120 }), /expired/);
    await expectInvalid(await sign({ ...baseClaims(), nbf: now() + 300 }), /not yet valid/);
    await expectInvalid(await sign({ ...baseClaims(), iss: 'https://elsewhere.example' }), /issuer/);
    await expectInvalid(await sign({ ...baseClaims(), aud: 'other-api' }), /audience/);
    await expectInvalid(await sign({ ...baseClaims(), exp: undefined }), /exp/);
    await expectInvalid(await sign(baseClaims(), { typ: 'JWT' }), /type/);
  });

  it('tolerates up to 5 s of clock skew by default (TOKEN_CLOCK_TOLERANCE_SECONDS), no more', async () => {
    expect((await api(`Bearer ${await sign({ ...baseClaims(), exp: now() - 3 })}`)).res.status).toBe(200);
    expect((await api(`Bearer ${await sign({ ...baseClaims(), nbf: now() + 3, iat: now() + 3 })}`)).res.status).toBe(
      200,
    );
    await expectInvalid(await sign({ ...baseClaims(), exp: now() - 7 }), /^the access token expired$/);
    await expectInvalid(await sign({ ...baseClaims(), nbf: now() + 7 }), /^the access token is not yet valid$/);
  });

  it('refuses a token it accepted and remembered once the token is past exp and the tolerance', async () => {
    // Accepted with 2 s of tolerance left, so the edge remembers it as verified.
    const exp = now() - 3;
    const token = await sign({ ...baseClaims(), iat: exp - 600, nbf: exp - 600, exp });
    expect((await api(`Bearer ${token}`)).res.status).toBe(200);
    // Wait on the clock itself, not a fixed time: until exp plus the tolerance has passed.
    while (Date.now() / 1000 <= exp + 6) await new Promise((r) => setTimeout(r, 100));
    await expectInvalid(token, /expired/);
  }, 10_000);

  it('refuses alg none and HS256 signed with the public key as the HMAC secret', async () => {
    const unsecured = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))}.${base64url.encode(JSON.stringify(baseClaims()))}.`;
    await expectInvalid(unsecured, /algorithm|malformed/);

    const { kty, crv, x, y } = edge.privateJwk;
    const publicKey = await importJWK({ kty, crv, x, y }, 'ES256', { extractable: true });
    const pem = await exportSPKI(publicKey as CryptoKey);
    const hmacSecrets = [
      new TextEncoder().encode(pem),
      new TextEncoder().encode(JSON.stringify({ kty, crv, x, y })),
      base64url.decode(x!),
    ];
    for (const secret of hmacSecrets) {
      const forged = await new SignJWT(baseClaims())
        .setProtectedHeader({ alg: 'HS256', kid: edge.privateJwk.kid, typ: 'at+jwt' })
        .sign(secret);
      await expectInvalid(forged, /algorithm/);
    }
  });

  it('refuses a token signed by another key, even with the same kid', async () => {
    const other = { ...(await generateSigningKey()), kid: edge.privateJwk.kid };
    await expectInvalid(await sign(baseClaims(), {}, other), /signature/);
  });

  it('requires org (a uuid) and client_id claims', async () => {
    await expectInvalid(await sign({ ...baseClaims(), org: undefined }), /org/);
    await expectInvalid(await sign({ ...baseClaims(), org: 'acme' }), /org/);
    await expectInvalid(await sign({ ...baseClaims(), client_id: undefined }), /client_id/);
    // azp names the client only in tokens of an external identity provider, never in the edge's own.
    await expectInvalid(await sign({ ...baseClaims(), client_id: undefined, azp: 'client-a' }), /client_id/);
  });

  it('answers 403 insufficient_scope to a valid token without the webapi scope', async () => {
    for (const scope of ['other', 'webapix', '']) {
      const { res, body, challenge } = await api(`Bearer ${await edge.token({ scope })}`);
      expect(res.status).toBe(403);
      expect(body).toEqual({
        error: 'insufficient_scope',
        error_description: 'the access token lacks the webapi scope',
      });
      expect(challenge).toBe(
        'Bearer realm="webapi", error="insufficient_scope", error_description="the access token lacks the webapi scope", scope="webapi"',
      );
    }
    expect((await api(`Bearer ${await edge.token({ scope: 'openid webapi' })}`)).res.status).toBe(200);
  });
});

describe('a misconfigured signing key', () => {
  it('is reported as a server error, never blamed on the client or the token', async () => {
    const broken = await startTestEdge({ seed: false, vars: { AUTH_SIGNING_KEY: '{"kty":"EC","crv":"P-256"}' } });
    try {
      const db = await broken.db();
      await db
        .prepare("INSERT INTO organizations (id, name, created) VALUES (?, 'Org A', '2025-01-01T00:00:00.000Z')")
        .bind(ORG_A)
        .run();
      await broken.seedClient('client-a', SECRET, ORG_A);
      const token = await fetch(new URL('/connect/token', broken.url), {
        method: 'POST',
        headers: FORM,
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'client-a', client_secret: SECRET }),
      });
      expect(token.status).toBe(500);
      expect(await token.json()).toEqual({
        error: 'server_error',
        error_description: 'the token signing key is not usable',
      });
      const guarded = await fetch(new URL('/api/Organizations', broken.url), {
        headers: { authorization: `Bearer ${await edge.token()}` },
      });
      expect(guarded.status).toBe(500);
      expect(((await guarded.json()) as { error: string }).error).toBe('server_error');
      expect(await (await fetch(new URL('/.well-known/jwks.json', broken.url))).json()).toEqual({ keys: [] });
    } finally {
      await broken.close();
    }
  });
});
