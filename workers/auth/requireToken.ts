/**
 * Bearer access tokens on /api/* (RFC 6750): verifies the JWT against the local issuer's key or the external identity
 * provider's JWKS, with TOKEN_CLOCK_TOLERANCE_SECONDS of clock drift on exp, nbf and iat (the caller's `expiresAt`
 * is exp plus it, when streams end), refuses one issued in the future or stating a lifetime above the maximum, then
 * checks the token's client against the registry (through the short-lived registry cache, so a disabled or removed
 * client's tokens stop within REGISTRY_CACHE_SECONDS) and sets the caller (client, organization, scopes, expiresAt)
 * every later handler scopes by.
 * The caller's scopes are those of the token the client still holds: narrowing a client narrows its issued tokens.
 * A client registered with allowed networks is refused (403 `Forbidden`, or a v2 `Forbidden` envelope) from any
 * other source (auth/allowedNetworks.ts); the caller carries its source address for the streams' re-checks.
 *
 * External identity provider: the provider governs its clients. A client id it issues for that is also registered
 * here is held to its registration (refused while disabled or registered to another organization, scopes narrowed to
 * the registered ones); an unregistered one is taken as the provider states it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { AppEnv, Caller } from '../env.js';
import { isUuid } from '../registry/ids.js';
import { cachedClientStanding } from '../registry/platformCache.js';
import { RegistryStore } from '../registry/registryStore.js';
import { configOf } from '../config.js';
import { authConfig, SCOPE, type AuthConfig } from './authConfig.js';
import { lifetimeProblem, scopesOf } from './tokenClaims.js';
import { bearerError } from './oauthError.js';
import { ALGORITHM, localKeys } from './signingKey.js';
import { rememberedPayload, rememberPayload } from './verifiedTokens.js';
import { sourceRefusal } from './allowedNetworks.js';
import { requestAddress } from '../limits/requestSource.js';
import { countSourceRefusal } from '../metrics/edgeMetrics.js';
import { refuse } from '../envelope/index.js';

/** RFC 6750 §2.1 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * External identity providers commonly sign with RS256 (RFC 9068 makes it mandatory to support); both are asymmetric,
 * so no HMAC secret can ever be confused with a public key. The local issuer signs ES256 only.
 */
const EXTERNAL_ALGORITHMS = [ALGORITHM, 'RS256'];

/**
 * One remote key set per isolate: jose caches its keys and refetches when a token names an unknown kid (key rotation),
 * at most once a second so tokens with made-up kids cannot turn the edge into a load generator for the provider.
 */
let remote: { url: string; timeoutMs: number; keys: ReturnType<typeof createRemoteJWKSet> } | undefined;

function remoteKeys(url: string, timeoutMs: number) {
  if (remote?.url !== url || remote.timeoutMs !== timeoutMs) {
    const options = { cooldownDuration: 1_000, cacheMaxAge: 600_000, timeoutDuration: timeoutMs };
    remote = { url, timeoutMs, keys: createRemoteJWKSet(new URL(url), options) };
  }
  return remote.keys;
}

/** Why a token failed, in words safe to hand back (no token content echoed). */
function describe(error: unknown): { status: 'invalid' | 'unavailable'; description: string } {
  const code = (error as { code?: string }).code;
  const claim = (error as { claim?: string }).claim;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return { status: 'invalid', description: 'the access token expired' };
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'iss') return { status: 'invalid', description: 'the access token has an unexpected issuer' };
      if (claim === 'aud') return { status: 'invalid', description: 'the access token has an unexpected audience' };
      if (claim === 'nbf') return { status: 'invalid', description: 'the access token is not yet valid' };
      if (claim === 'typ') return { status: 'invalid', description: 'the access token has an unexpected type' };
      return { status: 'invalid', description: `the access token claim ${claim ?? ''} is invalid`.trim() };
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return { status: 'invalid', description: 'the access token is signed with an algorithm that is not accepted' };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { status: 'invalid', description: 'the access token signature is invalid' };
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return { status: 'invalid', description: 'the access token is signed by an unknown key' };
    case 'ERR_JWKS_TIMEOUT':
      return { status: 'unavailable', description: 'the identity provider keys could not be fetched' };
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return { status: 'invalid', description: 'the access token is malformed' };
    default:
      // Anything else from a remote key set is a fetch or JWKS problem on the provider's side, not the caller's.
      return code === 'ERR_JWKS_INVALID' || !code
        ? { status: 'unavailable', description: 'the identity provider keys could not be fetched' }
        : { status: 'invalid', description: 'the access token is invalid' };
  }
}

async function verify(token: string, config: AuthConfig): Promise<JWTPayload> {
  const scope = `${config.mode} ${config.issuer} ${config.audience}`;
  const remembered = rememberedPayload(scope, token, config.clockToleranceSeconds);
  if (remembered) return remembered;
  const payload = await verifySignature(token, config);
  rememberPayload(scope, token, payload);
  return payload;
}

async function verifySignature(token: string, config: AuthConfig): Promise<JWTPayload> {
  const options: JWTVerifyOptions = {
    issuer: config.issuer,
    audience: config.audience,
    clockTolerance: config.clockToleranceSeconds,
    requiredClaims: ['exp'],
  };
  if (config.mode === 'external') {
    return (
      await jwtVerify(token, remoteKeys(config.jwksUrl, config.jwksTimeoutMs), {
        ...options,
        algorithms: EXTERNAL_ALGORITHMS,
      })
    ).payload;
  }
  const { publicKey } = await localKeys(config.signingKey ?? '');
  // Our own tokens are RFC 9068 access tokens: insisting on the type keeps other JWTs signed by the key out.
  return (await jwtVerify(token, publicKey, { ...options, algorithms: [ALGORITHM], typ: 'at+jwt' })).payload;
}

const REVOKED = 'the access token was revoked: its client is disabled or no longer registered';

/**
 * The token's scopes its client still holds (null when the client may no longer use tokens at all) and the networks
 * it may be used from (empty: anywhere). The scopes are worked out once per standing as read from the registry (a
 * re-read standing is a new object) and token's scope list.
 */
async function standingOf(
  c: Context<AppEnv>,
  config: AuthConfig,
  clientId: string,
  organizationId: string,
  scopes: string[],
): Promise<{ held: string[] | null; allowedNetworks: readonly string[] }> {
  const standing = await cachedClientStanding(clientId, configOf(c.env).REGISTRY_CACHE_SECONDS, () =>
    new RegistryStore(c.env.DB).findClientStanding(clientId),
  );
  if (!standing) return { held: config.mode === 'external' ? scopes : null, allowedNetworks: [] };
  if (standing.disabled || standing.organizationId.toLowerCase() !== organizationId)
    return { held: null, allowedNetworks: [] };
  let byScopes = heldByStanding.get(standing);
  if (!byScopes) heldByStanding.set(standing, (byScopes = new WeakMap()));
  let held = byScopes.get(scopes);
  if (!held) {
    const granted = new Set<string>(standing.scopes);
    held = scopes.filter((s) => granted.has(s));
    byScopes.set(scopes, held);
  }
  return { held, allowedNetworks: standing.allowedNetworks };
}
const heldByStanding = new WeakMap<object, WeakMap<string[], string[]>>();

/** A token's scopes, read once per verified payload (a remembered token's payload is the same object each time). */
const scopesByPayload = new WeakMap<JWTPayload, string[]>();
function payloadScopes(payload: JWTPayload): string[] {
  let scopes = scopesByPayload.get(payload);
  if (!scopes) scopesByPayload.set(payload, (scopes = scopesOf(payload)));
  return scopes;
}

/** The local signing key source last seen usable: its keys are cached, so it is not awaited again. */
let usableKey: string | undefined;

/**
 * Verifies the request's Bearer token: the caller, or the refusal to answer (401/403/503). Used by requireToken() on
 * /api/* and by routes that only add detail for an authenticated caller (/healthz).
 */
export async function authenticate(c: Context<AppEnv>): Promise<Caller | Response> {
  const header = c.req.header('authorization')?.trim();
  const match = header ? BEARER.exec(header) : null;
  if (!match) {
    if (!header || !/^bearer(\s|$)/i.test(header)) return bearerError(null);
    return bearerError('invalid_request', 'the Authorization header is not a valid Bearer credential');
  }

  const config = authConfig(c.env);
  // A missing or broken local key is the edge's fault, not the caller's: say so rather than blame the token.
  if (config.mode === 'local' && config.signingKey !== usableKey) {
    if (!(config.signingKey && (await localKeys(config.signingKey).catch(() => null)))) {
      return c.json({ error: 'server_error', error_description: 'the token signing key is not usable' }, 500);
    }
    usableKey = config.signingKey;
  }
  let payload: JWTPayload;
  try {
    payload = await verify(match[1], config);
  } catch (error) {
    const { status, description } = describe(error);
    if (status === 'unavailable')
      return c.json({ error: 'temporarily_unavailable', error_description: description }, 503);
    return bearerError('invalid_token', description);
  }
  const timing = lifetimeProblem(payload, config.maxLifetimeSeconds, config.clockToleranceSeconds);
  if (timing) return bearerError('invalid_token', timing);

  const organizationId = payload[config.orgClaim];
  if (typeof organizationId !== 'string' || !isUuid(organizationId)) {
    return bearerError('invalid_token', `the access token has no valid ${config.orgClaim} claim`);
  }
  const clientId = payload.client_id ?? (config.mode === 'external' ? payload.azp : undefined);
  if (typeof clientId !== 'string' || clientId === '')
    return bearerError('invalid_token', 'the access token has no client_id claim');
  const { held, allowedNetworks } = await standingOf(
    c,
    config,
    clientId,
    organizationId.toLowerCase(),
    payloadScopes(payload),
  );
  if (!held) return bearerError('invalid_token', REVOKED);
  if (!held.includes(SCOPE)) return bearerError('insufficient_scope', `the access token lacks the ${SCOPE} scope`);
  const address = requestAddress(c.req.raw);
  const outside = sourceRefusal(clientId, allowedNetworks, address);
  if (outside) {
    countSourceRefusal('api');
    return refuse(c, { kind: 'Forbidden', message: outside });
  }
  // The token is accepted until exp plus the tolerance: a stream it opens ends then, as a REST call would be refused.
  const expiresAt = ((payload.exp as number) + config.clockToleranceSeconds) * 1000;
  return { clientId, organizationId: organizationId.toLowerCase(), scopes: held, expiresAt, address };
}

export function requireToken(): MiddlewareHandler<AppEnv> {
  return async function requireToken(c, next) {
    const caller = await authenticate(c);
    if (caller instanceof Response) return caller;
    c.set('caller', caller);
    await next();
  };
}
