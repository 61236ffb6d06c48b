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
    // One draw of randomness per request: the span id, and the trace id too when the caller sent none.
    const random = randomHex(incoming ? 8 : 24);
    const traceId = incoming?.traceId ?? random.slice(0, 32);
    c.set('traceId', traceId);
    await next();
    c.res.headers.set(
      'traceparent',
      `00-${traceId}-${incoming ? random : random.slice(32)}-${incoming?.flags ?? '01'}`,
    );
  };
}
