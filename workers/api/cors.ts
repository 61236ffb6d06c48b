/**
 * CORS for browser clients (a web terminal on its own origin). The origins allowed are `CORS_ORIGINS`
 * (shared/corsOrigins.ts): none by default, `*` for any.
 *
 * - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered here, 204, before the token
 *   guard, the rate limit or any route: for an allowed origin with the methods and request headers the API takes;
 *   for any other origin without CORS headers, which the browser reads as a refusal.
 * - Every other answer to an allowed origin, refusals included (401, 403, 429, 503), carries
 *   `Access-Control-Allow-Origin` and exposes the gateway's own response headers, so a page can read its time budget,
 *   a write's unknown outcome, an idempotent replay, when to retry and the trace id.
 *
 * No credentials mode: a browser client sends its token in `Authorization`, never a cookie, so `*` stays usable.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { allowedOrigin, parseCorsOrigins, type OriginPolicy } from '../../shared/corsOrigins.js';
import { changeAnswerHeaders } from './answerHeaders.js';

/**
 * Request headers a browser client may send beyond the safelisted ones; the last two are what the SignalR browser client
 * sends with a hub's negotiate.
 */
export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Request-Timeout',
  'X-Gateway-Region',
  'X-Gateway-Position',
  'traceparent',
  'tracestate',
  'X-Requested-With',
  'X-SignalR-User-Agent',
];
/** The gateway's own response headers a page may read (the edge answers `traceparent`, not `traceresponse`). */
export const CORS_EXPOSE_HEADERS = [
  'X-Request-Timeout-Applied',
  'X-Request-Outcome',
  'Idempotency-Replayed',
  'Retry-After',
  'traceparent',
  'WWW-Authenticate',
  'X-Gateway-Region',
  'X-Gateway-Position',
];
export const CORS_ALLOW_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight's answer; short, so a narrowed CORS_ORIGINS takes effect soon. */
export const CORS_MAX_AGE_SECONDS = 600;

let parsed: { raw: string | undefined; policy: OriginPolicy } | undefined;

/** The policy of this isolate's `CORS_ORIGINS`, parsed once per value (entries that are not origins are ignored). */
function policyOf(raw: string | undefined): OriginPolicy {
  if (!parsed || parsed.raw !== raw) parsed = { raw, policy: parseCorsOrigins(raw).policy };
  return parsed.policy;
}

export function cors(): MiddlewareHandler<AppEnv> {
  return async function cors(c, next) {
    const policy = policyOf(configOf(c.env).CORS_ORIGINS);
    // No origin allowed (the default): nothing to add, and a preflight is answered without CORS headers below.
    if (policy.kind === 'none' && c.req.method !== 'OPTIONS') return next();
    const origin = c.req.header('origin');
    const allow = allowedOrigin(policy, origin);
    // The answer depends on the caller's origin only when the policy names origins.
    const vary = policy.kind === 'list';

    if (
      c.req.method === 'OPTIONS' &&
      origin !== undefined &&
      c.req.header('access-control-request-method') !== undefined
    ) {
      const headers: Record<string, string> = {};
      if (vary) headers.vary = 'Origin';
      if (allow) {
        headers['access-control-allow-origin'] = allow;
        headers['access-control-allow-methods'] = CORS_ALLOW_METHODS.join(', ');
        headers['access-control-allow-headers'] = CORS_ALLOW_HEADERS.join(', ');
        headers['access-control-max-age'] = String(CORS_MAX_AGE_SECONDS);
      }
      return c.body(null, 204, headers);
    }

    await next();
    if (!vary && !allow) return;
    changeAnswerHeaders(c, (headers) => {
      if (vary) headers.append('vary', 'Origin');
      if (allow) {
        headers.set('access-control-allow-origin', allow);
        headers.set('access-control-expose-headers', CORS_EXPOSE_HEADERS.join(', '));
      }
    });
  };
}
