/**
 * How the edge authenticates, worked out once per bindings object from its configuration (workers/config.ts): the
 * local issuer (own token endpoint, own ES256 key) or an external identity provider (AUTH_ISSUER + AUTH_JWKS_URL, both
 * required, local issuer off), and the clock tolerance every token is verified with.
 */
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import { WORKER_DEFAULTS } from '../../shared/environment.js';
import { READ_SCOPE } from '../../shared/catalog/operation.js';

/** The scope every token must carry to reach /api/ at all (read); operations may need another on top. */
export const SCOPE = READ_SCOPE;
/** The RFC 6750 realm of every Bearer challenge. */
export const REALM = 'webapi';
export const DEFAULT_TTL_SECONDS = WORKER_DEFAULTS.TOKEN_TTL_SECONDS;
/**
 * How far past its `exp` (and before its `nbf` and `iat`) a token is accepted unless TOKEN_CLOCK_TOLERANCE_SECONDS
 * says otherwise: enough for ordinary clock drift between issuer and edge, no more. One tolerance for REST calls and
 * streams: a stream ends when a REST call with its token would be refused.
 */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = WORKER_DEFAULTS.TOKEN_CLOCK_TOLERANCE_SECONDS;
/** The longest lifetime (exp − iat) a token may state, local or external, unless TOKEN_MAX_LIFETIME_SECONDS says otherwise. */
export const DEFAULT_MAX_LIFETIME_SECONDS = WORKER_DEFAULTS.TOKEN_MAX_LIFETIME_SECONDS;

export type AuthConfig =
  | {
      mode: 'local';
      issuer: string;
      audience: string;
      ttlSeconds: number;
      maxLifetimeSeconds: number;
      clockToleranceSeconds: number;
      orgClaim: 'org';
      signingKey: string | undefined;
    }
  | {
      mode: 'external';
      issuer: string;
      audience: string;
      jwksUrl: string;
      /** How long one fetch of the provider's keys may take. */
      jwksTimeoutMs: number;
      maxLifetimeSeconds: number;
      clockToleranceSeconds: number;
      orgClaim: string;
    };

const configs = new WeakMap<object, AuthConfig>();

/** The auth settings of these bindings (they do not change under a running isolate). */
export function authConfig(env: Env): AuthConfig {
  let config = configs.get(env);
  if (!config) configs.set(env, (config = settings(env)));
  return config;
}

function settings(env: Env): AuthConfig {
  const vars = configOf(env);
  const audience = vars.AUTH_AUDIENCE;
  const maxLifetimeSeconds = vars.TOKEN_MAX_LIFETIME_SECONDS;
  const clockToleranceSeconds = vars.TOKEN_CLOCK_TOLERANCE_SECONDS;
  if (vars.AUTH_ISSUER && vars.AUTH_JWKS_URL) {
    return {
      mode: 'external',
      issuer: vars.AUTH_ISSUER,
      audience,
      jwksUrl: vars.AUTH_JWKS_URL,
      jwksTimeoutMs: vars.AUTH_JWKS_TIMEOUT_MS,
      maxLifetimeSeconds,
      clockToleranceSeconds,
      orgClaim: vars.AUTH_ORG_CLAIM,
    };
  }
  return {
    mode: 'local',
    // The issuer is compared byte for byte by verifiers; a trailing slash would make PUBLIC_URL's two spellings differ.
    issuer: vars.PUBLIC_URL.replace(/\/+$/, ''),
    audience,
    // Never issue a token this edge itself would refuse.
    ttlSeconds: Math.min(vars.TOKEN_TTL_SECONDS, maxLifetimeSeconds),
    maxLifetimeSeconds,
    clockToleranceSeconds,
    orgClaim: 'org',
    signingKey: vars.AUTH_SIGNING_KEY,
  };
}
