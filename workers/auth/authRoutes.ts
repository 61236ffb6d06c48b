/**
 * The local issuer: the OAuth2 client-credentials token endpoint (RFC 6749 §4.4) and the discovery and key documents
 * verifiers need. In external identity provider mode all three answer 404 naming the real issuer, so a client
 * pointed at the wrong place learns where to go instead of getting tokens nobody accepts.
 */
import { Hono, type Context } from 'hono';
import { SignJWT } from 'jose';
import type { AppEnv } from '../env.js';
import { RegistryStore } from '../registry/registryStore.js';
import { hashSecret, verifySecret, type SecretHash } from '../../shared/secrets.js';
import { authConfig, SCOPE, type AuthConfig } from './authConfig.js';
import { presentedCredentials } from './clientAuthentication.js';
import { NO_STORE, tokenError } from './oauthError.js';
import { ALGORITHM, localKeys } from './signingKey.js';

export const TOKEN_PATH = '/connect/token';
export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/.well-known/jwks.json';

/** Token requests are a handful of short parameters; anything larger is not one. */
const MAX_BODY_BYTES = 4096;

/** Verified against when the client id is unknown, so unknown and wrong-secret answers take the same time. */
let decoy: Promise<SecretHash> | undefined;

const externalIssuerAnswer = (issuer: string) => tokenError('not_found', `tokens are issued by ${issuer}`);

type LocalConfig = Extract<AuthConfig, { mode: 'local' }>;

async function issueToken(c: Context<AppEnv>, config: LocalConfig): Promise<Response> {
  const contentType = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/x-www-form-urlencoded') {
    return tokenError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
  }
  // Refused before reading when the client announces the size; counted after reading otherwise (chunked bodies).
  if (Number(c.req.header('content-length') ?? 0) > MAX_BODY_BYTES) return tokenError('invalid_request', 'the request body is too large');
  const text = await c.req.text();
  if (new TextEncoder().encode(text).length > MAX_BODY_BYTES) return tokenError('invalid_request', 'the request body is too large');
  const form = new URLSearchParams(text);
  for (const key of new Set(form.keys())) {
    if (form.getAll(key).length > 1) return tokenError('invalid_request', `parameter ${key} is repeated`);
  }

  const authorization = c.req.header('authorization');
  const credentials = presentedCredentials(authorization, form);
  if (credentials.method === 'invalid' && credentials.reason === 'multiple') {
    return tokenError('invalid_request', 'use exactly one client authentication method: client_secret_basic or client_secret_post');
  }

  // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
  const grantType = form.get('grant_type') || undefined;
  if (!grantType) return tokenError('invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') return tokenError('unsupported_grant_type', 'only grant_type client_credentials is supported');
  const scope = form.get('scope') || undefined;
  if (scope !== undefined && !scope.split(' ').every((s) => s === SCOPE)) {
    return tokenError('invalid_scope', `the only scope is ${SCOPE}`);
  }

  const challenge = authorization !== undefined;
  if (credentials.method === 'none') return tokenError('invalid_client', 'client authentication is required', challenge);
  if (credentials.method === 'invalid') return tokenError('invalid_client', 'client authentication failed', challenge);

  const store = new RegistryStore(c.env.DB);
  const client = await store.findClient(credentials.clientId);
  decoy ??= hashSecret('decoy');
  const secretMatches = await verifySecret(credentials.clientSecret, client?.secret ?? (await decoy));
  // Unknown, disabled and wrong secret answer identically: nothing tells which client ids exist.
  if (!client || client.disabled || !secretMatches) return tokenError('invalid_client', 'client authentication failed', challenge);
  if (!client.grantTypes.includes('client_credentials')) {
    return tokenError('unauthorized_client', 'the client is not allowed to use grant_type client_credentials');
  }

  if (!config.signingKey) return tokenError('server_error', 'the token signing key is not configured');
  const keys = await localKeys(config.signingKey).catch(() => null);
  if (!keys) return tokenError('server_error', 'the token signing key is not usable');
  const now = Math.floor(Date.now() / 1000);
  const accessToken = await new SignJWT({ scope: SCOPE, client_id: client.clientId, org: client.organizationId })
    .setProtectedHeader({ alg: ALGORITHM, kid: keys.kid, typ: 'at+jwt' })
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setSubject(client.clientId)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + config.ttlSeconds)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
  return c.json({ access_token: accessToken, token_type: 'Bearer', expires_in: config.ttlSeconds, scope: SCOPE }, 200, NO_STORE);
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
    return c.json({
      issuer: config.issuer,
      token_endpoint: `${config.issuer}${TOKEN_PATH}`,
      jwks_uri: `${config.issuer}${JWKS_PATH}`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [SCOPE],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [ALGORITHM],
      access_token_signing_alg_values_supported: [ALGORITHM],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'scope', 'client_id', 'org'],
    }, 200, { 'Cache-Control': 'public, max-age=300' });
  });

  app.get(JWKS_PATH, async (c) => {
    const config = authConfig(c.env);
    if (config.mode === 'external') return externalIssuerAnswer(config.issuer);
    const keys = config.signingKey ? await localKeys(config.signingKey).catch(() => null) : null;
    return c.json({ keys: keys ? [keys.publicJwk] : [] }, 200, { 'Cache-Control': 'public, max-age=300' });
  });

  return app;
}
