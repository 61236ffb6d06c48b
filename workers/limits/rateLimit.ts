/**
 * Per-client rate limits of the edge: the token endpoint (per presented client id, checked before the secret is
 * hashed, so guessing costs the guesser) and the API (per authenticated client). Limits come from TOKEN_RATE_LIMIT,
 * API_RATE_LIMIT and RATE_LIMIT_WINDOW_SECONDS; a refusal is HTTP 429 with `Retry-After` in seconds.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Env } from '../env.js';
import { failure } from '../envelope/index.js';
import { QuotaLeases, type Admission, type Limit } from './quota.js';

export type Purpose = 'token' | 'api';

export const DEFAULT_TOKEN_RATE_LIMIT = 30;
export const DEFAULT_API_RATE_LIMIT = 30_000;
export const DEFAULT_RATE_LIMIT_WINDOW_SECONDS = 60;

const count = (value: string | undefined, fallback: number) => {
  const n = Number(value ?? fallback);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
};

export function limitOf(env: Env, purpose: Purpose): Limit {
  const seconds = count(env.RATE_LIMIT_WINDOW_SECONDS, DEFAULT_RATE_LIMIT_WINDOW_SECONDS) || DEFAULT_RATE_LIMIT_WINDOW_SECONDS;
  const limit = purpose === 'token' ? count(env.TOKEN_RATE_LIMIT, DEFAULT_TOKEN_RATE_LIMIT) : count(env.API_RATE_LIMIT, DEFAULT_API_RATE_LIMIT);
  return { limit, windowMs: seconds * 1000 };
}

/**
 * This isolate's leases. The counter namespace comes with each request's bindings; the latest one is used (they all
 * name the same objects).
 */
let namespace: Env['RATE_LIMITER'] | undefined;
const leases = new QuotaLeases((key, want, limit) => namespace!.get(namespace!.idFromName(key)).take(want, limit));

/**
 * Whether the client may make one more call of this purpose. A counter that cannot be reached admits the call: the
 * limit protects the service, and refusing every client because of it would be the outage it guards against.
 */
export async function admit(env: Env, purpose: Purpose, clientId: string): Promise<Admission> {
  const limit = limitOf(env, purpose);
  if (!(limit.limit > 0)) return { ok: true };
  try {
    namespace = env.RATE_LIMITER;
    return await leases.admit(`${purpose}:${clientId}`, limit);
  } catch (error) {
    console.error(JSON.stringify({ msg: 'rate limiter unavailable; call admitted', purpose, error: String(error) }));
    return { ok: true };
  }
}

/**
 * The API's per-client limit, after requireToken(): HTTP 429 with `Retry-After`; the body is the route's generation's
 * error (a v2 envelope with `Forbidden`, else the v1 error body), so either kind of client can read why.
 */
export function apiRateLimit(): MiddlewareHandler<AppEnv> {
  return async function apiRateLimit(c, next) {
    const admission = await admit(c.env, 'api', c.get('caller').clientId);
    if (admission.ok) return next();
    const { limit, windowMs } = limitOf(c.env, 'api');
    const message = `rate limit: at most ${limit} calls per ${windowMs / 1000} s for this client; retry after ${admission.retryAfterSeconds} s`;
    const headers = { 'Retry-After': String(admission.retryAfterSeconds) };
    if (c.req.path.startsWith('/api/v2/')) {
      const r = failure({ generation: 'v2', family: null, paged: false, traceId: c.get('traceId') }, { code: 'Forbidden', managerCode: null, message });
      return c.body(r.body, 429, { ...headers, 'content-type': 'application/json; charset=utf-8' });
    }
    return c.json({ errorType: 'TooManyRequests', errorCode: 'TooManyRequests', errorDescription: message }, 429, headers);
  };
}
