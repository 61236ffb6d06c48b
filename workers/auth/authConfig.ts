/**
 * How the edge authenticates, read from its variables in one place: the local issuer (own token endpoint, own ES256
 * key) or an external identity provider (AUTH_ISSUER + AUTH_JWKS_URL, both required, local issuer off).
 */
import type { Env } from '../env.js';

export const SCOPE = 'webapi';
/** The RFC 6750 realm of every Bearer challenge. */
export const REALM = 'webapi';
export const DEFAULT_TTL_SECONDS = 3600;
/** Verification tolerance for exp/nbf: enough for ordinary clock drift between issuer and edge, no more. */
export const CLOCK_TOLERANCE_SECONDS = 60;

export type AuthConfig =
  | { mode: 'local'; issuer: string; audience: string; ttlSeconds: number; orgClaim: 'org'; signingKey: string | undefined }
  | { mode: 'external'; issuer: string; audience: string; jwksUrl: string; orgClaim: string };

const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8787';

export function authConfig(env: Env): AuthConfig {
  const audience = env.AUTH_AUDIENCE || SCOPE;
  if (env.AUTH_ISSUER && env.AUTH_JWKS_URL) {
    return { mode: 'external', issuer: env.AUTH_ISSUER, audience, jwksUrl: env.AUTH_JWKS_URL, orgClaim: env.AUTH_ORG_CLAIM || 'org' };
  }
  const ttl = Number(env.TOKEN_TTL_SECONDS);
  return {
    mode: 'local',
    // The issuer is compared byte for byte by verifiers; a trailing slash would make PUBLIC_URL's two spellings differ.
    issuer: (env.PUBLIC_URL || DEFAULT_PUBLIC_URL).replace(/\/+$/, ''),
    audience,
    ttlSeconds: Number.isInteger(ttl) && ttl > 0 ? ttl : DEFAULT_TTL_SECONDS,
    orgClaim: 'org',
    signingKey: env.AUTH_SIGNING_KEY,
  };
}
