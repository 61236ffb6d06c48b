/**
 * How the edge authenticates, read from its variables in one place: the local issuer (own token endpoint, own ES256
 * key) or an external identity provider (AUTH_ISSUER + AUTH_JWKS_URL, both required, local issuer off).
 */
import type { Env } from '../env.js';
import { READ_SCOPE } from '../../shared/catalog/operation.js';

/** The scope every token must carry to reach /api/ at all (read); operations may need another on top. */
export const SCOPE = READ_SCOPE;
/** The RFC 6750 realm of every Bearer challenge. */
export const REALM = 'webapi';
export const DEFAULT_TTL_SECONDS = 3600;
/** Verification tolerance for exp/nbf: enough for ordinary clock drift between issuer and edge, no more. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** The longest lifetime (exp − iat) a token may state, local or external, unless TOKEN_MAX_LIFETIME_SECONDS says otherwise. */
export const DEFAULT_MAX_LIFETIME_SECONDS = 86_400;

export type AuthConfig =
  | { mode: 'local'; issuer: string; audience: string; ttlSeconds: number; maxLifetimeSeconds: number; orgClaim: 'org'; signingKey: string | undefined }
  | { mode: 'external'; issuer: string; audience: string; jwksUrl: string; maxLifetimeSeconds: number; orgClaim: string };

const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8787';

export function authConfig(env: Env): AuthConfig {
  const audience = env.AUTH_AUDIENCE || SCOPE;
  const max = Number(env.TOKEN_MAX_LIFETIME_SECONDS);
  const maxLifetimeSeconds = Number.isInteger(max) && max > 0 ? max : DEFAULT_MAX_LIFETIME_SECONDS;
  if (env.AUTH_ISSUER && env.AUTH_JWKS_URL) {
    return { mode: 'external', issuer: env.AUTH_ISSUER, audience, jwksUrl: env.AUTH_JWKS_URL, maxLifetimeSeconds, orgClaim: env.AUTH_ORG_CLAIM || 'org' };
  }
  const ttl = Number(env.TOKEN_TTL_SECONDS);
  return {
    mode: 'local',
    // The issuer is compared byte for byte by verifiers; a trailing slash would make PUBLIC_URL's two spellings differ.
    issuer: (env.PUBLIC_URL || DEFAULT_PUBLIC_URL).replace(/\/+$/, ''),
    audience,
    // Never issue a token this edge itself would refuse.
    ttlSeconds: Math.min(Number.isInteger(ttl) && ttl > 0 ? ttl : DEFAULT_TTL_SECONDS, maxLifetimeSeconds),
    maxLifetimeSeconds,
    orgClaim: 'org',
    signingKey: env.AUTH_SIGNING_KEY,
  };
}
