/**
 * `Retry-After` on every 503 and 504 the edge answers that does not carry one yet: the v1 envelope sets its own
 * (workers/envelope), this covers the rest (`/healthz` with a part down, an identity provider's key set unreachable),
 * so a client or a load balancer backs off the same way whichever part said "not now".
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';
import { RETRY_AFTER_SECONDS } from '../envelope/index.js';
import { changeAnswerHeaders } from './answerHeaders.js';

export function retryAfter(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const seconds = RETRY_AFTER_SECONDS[c.res.status];
    if (seconds === undefined || c.res.headers.has('retry-after')) return;
    changeAnswerHeaders(c, (headers) => headers.set('Retry-After', String(seconds)));
  };
}
