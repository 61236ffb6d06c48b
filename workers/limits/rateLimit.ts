/**
 * Rate limits of the edge, each a fixed window of RATE_LIMIT_WINDOW_SECONDS counted across isolates (quota.ts):
 *
 * - `token` (TOKEN_RATE_LIMIT, per client id): tokens issued to a client, spent only by a request that presented the
 *   client's right secret, so wrong secrets never spend the budget of the secret's holder.
 * - `token-fail` (TOKEN_FAILURE_LIMIT, per source address, requestSource.ts): failed client authentications (unknown
 *   id, wrong secret, disabled client); a spent window refuses every token request from that source, the right secret
 *   included, while the same client from other sources is unaffected.
 * - `token-verify` (TOKEN_VERIFY_LIMIT, one for the whole edge): client secrets verified (each a 100,000-iteration
 *   PBKDF2), the bound on the hashing that unauthenticated callers can cause, whatever their number.
 * - `api` (API_RATE_LIMIT, per authenticated client): calls under /api/.
 *
 * A refusal is HTTP 429 with `Retry-After` in seconds. Counter objects exist only for keys that something spent:
 * registered clients that authenticated and the edge's one verification counter; never for a client id someone
 * merely presented. Sources are chosen by the caller, so they get no object each: `token-fail` is counted in
 * TOKEN_FAILURE_SHARDS objects, each source in one of them (counterShards.ts), with the same limit, window and
 * Retry-After per source as an object of its own would give.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, Env } from '../env.js';
import { configOf } from '../config.js';
import { refuse } from '../envelope/index.js';
import { QuotaLeases, type Admission, type Limit } from './quota.js';
import { shardName, shardOf } from './counterShards.js';

export type Purpose = 'token' | 'token-fail' | 'token-verify' | 'api';

const LIMITS: Record<Purpose, 'TOKEN_RATE_LIMIT' | 'TOKEN_FAILURE_LIMIT' | 'TOKEN_VERIFY_LIMIT' | 'API_RATE_LIMIT'> = {
  token: 'TOKEN_RATE_LIMIT',
  'token-fail': 'TOKEN_FAILURE_LIMIT',
  'token-verify': 'TOKEN_VERIFY_LIMIT',
  api: 'API_RATE_LIMIT',
};

/** The purpose's limit and window, from the edge's configuration (defaults in shared/environment.ts). */
export function limitOf(env: Env, purpose: Purpose): Limit {
  const config = configOf(env);
  return { limit: config[LIMITS[purpose]], windowMs: config.RATE_LIMIT_WINDOW_SECONDS * 1000 };
}

/** The purpose counted in a fixed number of objects (counterShards.ts), TOKEN_FAILURE_SHARDS of them; the rest one object a key. */
const SHARDED: Purpose = 'token-fail';

/**
 * This isolate's leases, by `<purpose>:<key>`. The counter namespace and the shards' settings come with each
 * request's bindings; the latest ones are used (they all name the same objects).
 */
let bindings: Env | undefined;
const leases = new QuotaLeases(async (counted, want, limit) => {
  const env = bindings!;
  const namespace = env.RATE_LIMITER;
  if (!counted.startsWith(`${SHARDED}:`)) return namespace.get(namespace.idFromName(counted)).take(want, limit);
  const config = configOf(env);
  // Keyed by a secret every isolate of the deployment has: the broker link's, else the signing key (either stays put).
  const n = await shardOf(config.BROKER_SECRET ?? config.AUTH_SIGNING_KEY ?? '', counted, config.TOKEN_FAILURE_SHARDS);
  return namespace.get(namespace.idFromName(shardName(SHARDED, n))).take(want, limit, counted);
});

/**
 * Asks the counters through `ask`. A counter that cannot be reached admits the call: the limit protects the service,
 * and refusing every client because of it would be the outage it guards against.
 */
async function counted(
  env: Env,
  purpose: Purpose,
  key: string,
  ask: (key: string, limit: Limit) => Promise<Admission>,
): Promise<Admission> {
  const limit = limitOf(env, purpose);
  if (!(limit.limit > 0)) return { ok: true };
  try {
    bindings = env;
    return await ask(`${purpose}:${key}`, limit);
  } catch (error) {
    console.error(JSON.stringify({ msg: 'rate limiter unavailable; call admitted', purpose, error: String(error) }));
    return { ok: true };
  }
}

/** Spends one call of `key`'s budget for this purpose if the window has one left. */
export function admit(env: Env, purpose: Purpose, key: string): Promise<Admission> {
  return counted(env, purpose, key, (k, limit) => leases.admit(k, limit));
}

/** Whether `admit` would admit one more call, spending nothing (quota.ts `peek`). */
export function peek(env: Env, purpose: Purpose, key: string): Promise<Admission> {
  return counted(env, purpose, key, (k, limit) => leases.peek(k, limit));
}

/**
 * The refusal this isolate has already learned for `key` (a spent window), else ok: no counter call, so checking
 * costs nothing on the way of a request that will not spend.
 */
export function knownRefusal(env: Env, purpose: Purpose, key: string): Admission {
  if (!(limitOf(env, purpose).limit > 0)) return { ok: true };
  return leases.knownRefusal(`${purpose}:${key}`);
}

/**
 * The API's per-client limit, after requireToken(): HTTP 429 with `Retry-After`; the body is the route's generation's
 * error (a v2 envelope with `Forbidden`, else the v1 error body), so either kind of client can read why.
 */
export function apiRateLimit(): MiddlewareHandler<AppEnv> {
  return async function apiRateLimit(c, next) {
    const admission = await admit(c.env, 'api', c.get('caller').clientId);
    if (admission.ok) return next();
    return apiRateRefusal(c, admission.retryAfterSeconds);
  };
}

/** The refusal of a call past the client's API budget (the API's routes and the hubs' negotiate and upgrade). */
export function apiRateRefusal(c: Context<AppEnv>, retryAfterSeconds: number): Response {
  return refuse(c, {
    kind: 'TooManyRequests',
    message: apiRateMessage(c.env, retryAfterSeconds),
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** Why a call past the client's API budget is refused, in the same words on every route and in a hub's completions. */
export function apiRateMessage(env: Env, retryAfterSeconds: number): string {
  const { limit, windowMs } = limitOf(env, 'api');
  return `rate limit: at most ${limit} calls per ${windowMs / 1000} s for this client; retry after ${retryAfterSeconds} s`;
}
