/**
 * OAuth error answers as clients read them: the token endpoint's RFC 6749 §5.2 bodies (status per error code, never
 * cached, the Basic challenge after a failed Basic authentication) and the protected resources' RFC 6750 §3 Bearer
 * challenges (status per error, the scope an insufficient_scope refusal needs, descriptions made safe to quote).
 */
import { describe, expect, it } from 'vitest';
import { bearerError, insufficientScopeChallenge, NO_STORE, tokenError, type TokenErrorCode } from './oauthError.js';
import { scopeRefusal } from './requireScope.js';
import { registryOperations } from '../../shared/catalog/registry.js';
import type { Operation } from '../../shared/catalog/index.js';

describe('token endpoint errors', () => {
  it('answer each error code with its status and the {error, error_description} body, never cached', async () => {
    const statuses: Record<TokenErrorCode, number> = {
      invalid_request: 400,
      invalid_client: 401,
      invalid_grant: 400,
      unauthorized_client: 400,
      unsupported_grant_type: 400,
      invalid_scope: 400,
      server_error: 500,
      not_found: 404,
      too_many_requests: 429,
    };
    for (const [code, status] of Object.entries(statuses) as [TokenErrorCode, number][]) {
      const res = tokenError(code, `because ${code}`);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({ error: code, error_description: `because ${code}` });
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('pragma')).toBe('no-cache');
      expect(res.headers.get('www-authenticate')).toBeNull();
    }
    expect(NO_STORE).toEqual({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  });

  it('challenge Basic after a failed Basic client authentication', async () => {
    const res = tokenError('invalid_client', 'client authentication failed', true);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="webapi", charset="UTF-8"');
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });
});

describe('Bearer challenges', () => {
  it('name no error when the request carried no credentials', async () => {
    const res = bearerError(null);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="webapi"');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: 'invalid_token', error_description: 'an access token is required' });
  });

  it('answer invalid_request 400, invalid_token 401 and insufficient_scope 403 naming the scope', async () => {
    const malformed = bearerError('invalid_request', 'the Authorization header is not a valid Bearer credential');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('www-authenticate')).toBe(
      'Bearer realm="webapi", error="invalid_request", error_description="the Authorization header is not a valid Bearer credential"',
    );
    expect(await malformed.json()).toEqual({
      error: 'invalid_request',
      error_description: 'the Authorization header is not a valid Bearer credential',
    });

    const expired = bearerError('invalid_token', 'the access token expired');
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toBe(
      'Bearer realm="webapi", error="invalid_token", error_description="the access token expired"',
    );
    expect(await expired.json()).toEqual({ error: 'invalid_token', error_description: 'the access token expired' });

    const lacking = bearerError('insufficient_scope', 'the access token lacks the webapi scope');
    expect(lacking.status).toBe(403);
    expect(lacking.headers.get('www-authenticate')).toBe(
      'Bearer realm="webapi", error="insufficient_scope", error_description="the access token lacks the webapi scope", scope="webapi"',
    );
    const bare = bearerError('invalid_token');
    expect(bare.headers.get('www-authenticate')).toBe(
      'Bearer realm="webapi", error="invalid_token", error_description=""',
    );
    expect(await bare.json()).toEqual({ error: 'invalid_token', error_description: '' });
    const admin = bearerError('insufficient_scope', 'needs admin', 'webapi.admin');
    expect(admin.headers.get('www-authenticate')).toMatch(/, scope="webapi\.admin"$/);
    expect(await admin.json()).toEqual({ error: 'insufficient_scope', error_description: 'needs admin' });
  });

  it('quote descriptions without quotes, backslashes or control characters; the body keeps them', async () => {
    const description = 'claim "org" \\ bad\u0007\nline [ok] #1! ~';
    const res = bearerError('invalid_token', description);
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="webapi", error="invalid_token", error_description="claim  org    bad  line [ok] #1! ~"',
    );
    expect((await res.json<{ error_description: string }>()).error_description).toBe(description);
    expect(insufficientScopeChallenge('webapi.write', 'lacks "webapi.write"')).toBe(
      'Bearer realm="webapi", error="insufficient_scope", error_description="lacks  webapi.write ", scope="webapi.write"',
    );
  });
});

describe('scope refusal per operation', () => {
  const ctx = { generation: 'v1' as const, family: null, paged: false, traceId: '0af7651916cd43dd8448eb211c80319c' };
  const entry = { ...registryOperations.TradePlatforms, scope: 'webapi.write' } as Operation;

  it("lets a caller holding the operation's scope through", () => {
    expect(
      scopeRefusal(entry, { clientId: 'c', organizationId: 'o', scopes: ['webapi', 'webapi.write'] }, ctx),
    ).toBeNull();
  });

  it('refuses a caller without it, naming the scope in the message and the challenge', () => {
    const refused = scopeRefusal(
      entry,
      { clientId: 'c', organizationId: 'o', scopes: ['webapi', 'webapi.admin'] },
      ctx,
    )!;
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({
      errorDescription: 'the access token lacks the webapi.write scope this operation needs',
    });
    expect(refused.headers['WWW-Authenticate']).toBe(
      'Bearer realm="webapi", error="insufficient_scope", error_description="the access token lacks the webapi.write scope this operation needs", scope="webapi.write"',
    );
  });
});
