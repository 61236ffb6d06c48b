/**
 * The local issuer: the OAuth2 client-credentials token endpoint (RFC 6749 §4.4) and the discovery and key documents
 * verifiers need. In external identity provider mode all three answer 404 naming the real issuer, so a client
 * pointed at the wrong place learns where to go instead of getting tokens nobody accepts.
 *
 * The endpoint is the one place an attacker can make the edge hash secrets, so its work is bounded (the limits are
 * described in limits/rateLimit.ts; every refusal is 429 too_many_requests with Retry-After):
 * - the body is read at most MAX_BODY_BYTES (announced or chunked); one that cannot be read to its end (broken chunked
 *   framing, a caller gone mid-body) is `invalid_request`, logged at debug level only;
 * - a source whose failed authentications in the window are spent (TOKEN_FAILURE_LIMIT) is refused before any work,
 *   from what the isolate has learned, with no counter call; each failure (unknown id, wrong secret, disabled client)
 *   then spends one of its source's budget;
 * - every secret check takes one of the edge's verifications (TOKEN_VERIFY_LIMIT) first;
 * - an unknown client id is not hashed: the endpoint waits about as long as a check takes (secretVerification.ts) and
 *   answers as it answers a wrong secret, and asks the verification budget without spending it, so a spent budget
 *   refuses it exactly as it refuses a registered id;
 * - only the right secret of a registered client spends that client's budget (TOKEN_RATE_LIMIT), so wrong secrets
 *   never lock its holder out, and only such clients ever get a counter object.
 * Unknown, disabled and wrong-secret clients get the same answer, byte for byte, after the same steps.
 *
 * Allowed networks (auth/allowedNetworks.ts): a client with a list authenticated from a source outside it is answered
 * `unauthorized_client` naming the rule and the request's address, counted in /metrics, and spends no token budget.
 *
 * Scopes (RFC 6749 §3.3): a token carries only scopes its client holds. No scope, or `webapi` alone (what existing
 * SDKs ask for), grants every scope the client holds; a list of scopes grants those of them it holds, plus `webapi`,
 * which every token carries. An unknown scope name is `invalid_scope`. The answer's `scope` names what was granted.
 */
import { Hono, type Context } from 'hono';
import { SignJWT } from 'jose';
import type { AppEnv } from '../env.js';
import { RegistryStore } from '../registry/registryStore.js';
import { SCOPES } from '../../shared/catalog/operation.js';
import { admit, knownRefusal, limitOf, peek } from '../limits/rateLimit.js';
import { requestAddress, requestSource } from '../limits/requestSource.js';
import { countSourceRefusal } from '../metrics/edgeMetrics.js';
import { sourceRefusal } from './allowedNetworks.js';
import { bodyNotRead } from '../api/requestBody.js';
import { authConfig, SCOPE, type AuthConfig } from './authConfig.js';
import { presentedCredentials } from './clientAuthentication.js';
import { NO_STORE, tokenError } from './oauthError.js';
import { checkSecret, standInForCheck } from './secretVerification.js';
import { ALGORITHM, localKeys } from './signingKey.js';

export const TOKEN_PATH = '/connect/token';
export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';

/** Token requests are a handful of short parameters; anything larger is not one. */
const MAX_BODY_BYTES = 4096;

/** When the isolate last logged a spent verification budget: once per window is enough. */
let verifyBudgetLoggedUntil = 0;

const externalIssuerAnswer = (issuer: string) => tokenError('not_found', `tokens are issued by ${issuer}`);

type LocalConfig = Extract<AuthConfig, { mode: 'local' }>;

async function issueToken(c: Context<AppEnv>, config: LocalConfig): Promise<Response> {
  const contentType = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/x-www-form-urlencoded') {
    return tokenError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
  }
  // Refused before reading when the client announces the size; read no further than the limit otherwise (chunked).
  if (Number(c.req.header('content-length') ?? 0) > MAX_BODY_BYTES)
    return tokenError('invalid_request', 'the request body is too large');
  const text = await boundedText(c.req.raw, MAX_BODY_BYTES).catch((error: unknown) => {
    bodyNotRead(c, error);
    return undefined;
  });
  if (text === undefined) return tokenError('invalid_request', 'the request body could not be read to its end');
  if (text === null) return tokenError('invalid_request', 'the request body is too large');
  const form = new URLSearchParams(text);
  for (const key of new Set(form.keys())) {
    if (form.getAll(key).length > 1) return tokenError('invalid_request', `parameter ${key} is repeated`);
  }

  const authorization = c.req.header('authorization');
  const credentials = presentedCredentials(authorization, form);
  if (credentials.method === 'invalid' && credentials.reason === 'multiple') {
    return tokenError(
      'invalid_request',
      'use exactly one client authentication method: client_secret_basic or client_secret_post',
    );
  }

  // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
  const grantType = form.get('grant_type') || undefined;
  if (!grantType) return tokenError('invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials')
    return tokenError('unsupported_grant_type', 'only grant_type client_credentials is supported');
  const requested = (form.get('scope') || '').split(' ').filter(Boolean);
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length)
    return tokenError('invalid_scope', `unknown scope ${unknown.join(', ')}: the scopes are ${SCOPES.join(', ')}`);

  const challenge = authorization !== undefined;
  if (credentials.method === 'none')
    return tokenError('invalid_client', 'client authentication is required', challenge);
  if (credentials.method === 'invalid') return tokenError('invalid_client', 'client authentication failed', challenge);

  const source = requestSource(c.req.raw);
  const sourceSpent = knownRefusal(c.env, 'token-fail', source);
  if (!sourceSpent.ok) return tooManyFailures(sourceSpent.retryAfterSeconds);

  const store = new RegistryStore(c.env.DB);
  const client = await store.findClient(credentials.clientId);
  // A registered id spends a verification; an unknown one only asks, so a spent budget refuses both alike.
  const verification = client ? await admit(c.env, 'token-verify', 'all') : await peek(c.env, 'token-verify', 'all');
  if (!verification.ok) return verificationsSpent(c, verification.retryAfterSeconds);
  let authenticated = false;
  if (client) authenticated = (await checkSecret(credentials.clientSecret, client.secret)) && !client.disabled;
  else await standInForCheck();
  // Unknown, disabled and wrong secret answer identically: nothing tells which client ids exist.
  if (!client || !authenticated) {
    const failure = await admit(c.env, 'token-fail', source);
    if (!failure.ok) return tooManyFailures(failure.retryAfterSeconds);
    return tokenError('invalid_client', 'client authentication failed', challenge);
  }
  // Only an authenticated client learns that its source is refused; a secret used from elsewhere spends nothing of
  // its holder's token budget.
  const outside = sourceRefusal(client.clientId, client.allowedNetworks, requestAddress(c.req.raw));
  if (outside) {
    countSourceRefusal('token');
    return tokenError('unauthorized_client', outside);
  }
  const issued = await admit(c.env, 'token', client.clientId);
  if (!issued.ok) return tooManyTokenRequests(issued.retryAfterSeconds, 'too many token requests for this client');
  if (!client.grantTypes.includes('client_credentials')) {
    return tokenError('unauthorized_client', 'the client is not allowed to use grant_type client_credentials');
  }

  if (!config.signingKey) return tokenError('server_error', 'the token signing key is not configured');
  const keys = await localKeys(config.signingKey).catch(() => null);
  if (!keys) return tokenError('server_error', 'the token signing key is not usable');
  const granted = grantedScopes(requested, client.scopes);
  const now = Math.floor(Date.now() / 1000);
  const accessToken = await new SignJWT({ scope: granted, client_id: client.clientId, org: client.organizationId })
    .setProtectedHeader({ alg: ALGORITHM, kid: keys.kid, typ: 'at+jwt' })
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setSubject(client.clientId)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + config.ttlSeconds)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
  return c.json(
    { access_token: accessToken, token_type: 'Bearer', expires_in: config.ttlSeconds, scope: granted },
    200,
    NO_STORE,
  );
}

/** What a token request is granted, as the space-separated `scope` value (see the module comment). */
function grantedScopes(requested: string[], held: readonly string[]): string {
  const everything = requested.length === 0 || (requested.length === 1 && requested[0] === SCOPE);
  const wanted = new Set<string>(everything ? held : [SCOPE, ...requested]);
  return SCOPES.filter((s) => wanted.has(s) && held.includes(s)).join(' ');
}

function tooManyTokenRequests(retryAfterSeconds: number, reason: string): Response {
  const res = tokenError('too_many_requests', `${reason}; retry after ${retryAfterSeconds} s`);
  res.headers.set('Retry-After', String(retryAfterSeconds));
  return res;
}

const tooManyFailures = (retryAfterSeconds: number) =>
  tooManyTokenRequests(retryAfterSeconds, 'too many failed token requests from this address');

/** The edge's verification budget is spent: refused, and said once per window in the log (at warn level). */
function verificationsSpent(c: Context<AppEnv>, retryAfterSeconds: number): Response {
  const now = Date.now();
  if (now >= verifyBudgetLoggedUntil) {
    verifyBudgetLoggedUntil = now + retryAfterSeconds * 1000;
    const { limit, windowMs } = limitOf(c.env, 'token-verify');
    console.warn(
      JSON.stringify({
        level: 'warn',
        msg: 'token verification budget spent; token requests refused until the window ends',
        limit,
        windowSeconds: windowMs / 1000,
        retryAfterSeconds,
      }),
    );
  }
  return tooManyTokenRequests(retryAfterSeconds, 'too many token requests');
}

/**
 * The body as text if it is at most `max` bytes, else null; stops reading (and cancels the stream) at the first byte
 * past the limit, so a chunked body of any size costs at most `max` bytes of memory.
 */
async function boundedText(request: Request, max: number): Promise<string | null> {
  if (!request.body) return '';
  const reader = request.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

export function authRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.all(TOKEN_PATH, async (c) => {
    const config = authConfig(c.env);
    if (config.mode === 'external') return externalIssuerAnswer(config.issuer);
    if (c.req.method !== 'POST') {
      const res = tokenError('invalid_request', 'the token endpoint accepts POST only');
      return new Response(res.body, { status: 405, headers: { ...Object.fromEntries(res.headers), Allow: 'POST' } });
    }
    return issueToken(c, config);
  });

  app.get(DISCOVERY_PATH, (c) => {
    const config = authConfig(c.env);
    if (config.mode === 'external') return externalIssuerAnswer(config.issuer);
    return c.json(
      {
        issuer: config.issuer,
        token_endpoint: `${config.issuer}${TOKEN_PATH}`,
        jwks_uri: `${config.issuer}${JWKS_PATH}`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [...SCOPES],
        response_types_supported: ['token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [ALGORITHM],
        access_token_signing_alg_values_supported: [ALGORITHM],
        claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'scope', 'client_id', 'org'],
      },
      200,
      { 'Cache-Control': 'public, max-age=300' },
    );
  });

  app.get(JWKS_PATH, async (c) => {
    const config = authConfig(c.env);
    if (config.mode === 'external') return externalIssuerAnswer(config.issuer);
    const keys = config.signingKey ? await localKeys(config.signingKey).catch(() => null) : null;
    return c.json({ keys: keys ? [keys.publicJwk] : [] }, 200, { 'Cache-Control': 'public, max-age=300' });
  });

  return app;
}
