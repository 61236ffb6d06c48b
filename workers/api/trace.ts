/**
 * W3C trace context: the trace id of a valid incoming `traceparent` is kept (so `meta.activityId` correlates with the
 * caller's own logs), otherwise a new one is made; the response carries a `traceparent` naming the edge's span.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export function parseTraceparent(header: string | undefined): { traceId: string; flags: string } | null {
  if (!header) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return null;
  const [, version, traceId, parentId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return null;
  return { traceId, flags };
}

export function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let s = '';
  for (const x of b) s += (x < 16 ? '0' : '') + x.toString(16);
  return s;
}

export function traceContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = parseTraceparent(c.req.header('traceparent'));
    const traceId = incoming?.traceId ?? randomHex(16);
    c.set('traceId', traceId);
    await next();
    c.res.headers.set('traceparent', `00-${traceId}-${randomHex(8)}-${incoming?.flags ?? '01'}`);
  };
}
