/**
 * W3C trace context: the trace id of a valid incoming `traceparent` is kept (so `meta.activityId` correlates with the
 * caller's own logs), otherwise a new one is made; the response carries a `traceparent` naming the edge's span.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';
import { parseTraceparent, randomHex } from './traceparent.js';

export function traceContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = parseTraceparent(c.req.header('traceparent'));
    const traceId = incoming?.traceId ?? randomHex(16);
    c.set('traceId', traceId);
    await next();
    c.res.headers.set('traceparent', `00-${traceId}-${randomHex(8)}-${incoming?.flags ?? '01'}`);
  };
}
