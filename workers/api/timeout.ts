/**
 * The call's time budget: `X-Request-Timeout` header or `requestTimeout` query, 1 to 300 seconds (fractions allowed),
 * else the entry's class default. The value used is answered in `X-Request-Timeout-Applied` on every response under
 * /api/: the operation routes set it themselves; `timeoutApplied()` sets it on every other answer there (registry
 * reads, the token guard's refusals, an oversize body, an unknown route, an internal error) from the operation the
 * request addresses, so a refusal names the same budget the call would have had.
 */
import type { MiddlewareHandler } from 'hono';
import {
  catalog,
  TIMEOUT_CLASSES,
  TIMEOUT_MAX_S,
  TIMEOUT_MIN_S,
  type Operation,
  type TimeoutClass,
} from '../../shared/catalog/index.js';

export const TIMEOUT_HEADER = 'X-Request-Timeout';
export const TIMEOUT_APPLIED_HEADER = 'X-Request-Timeout-Applied';
export const TIMEOUT_QUERY = 'requestTimeout';

export type Budget = { ok: true; seconds: number } | { ok: false; seconds: number; message: string };

export function resolveTimeout(entry: Operation, header: string | undefined, query: string | null): Budget {
  return resolveBudget(entry.timeout, header, query);
}

/** The budget of a call of the given class: the valid requested one, else the class default (also when refused). */
export function resolveBudget(
  timeout: TimeoutClass,
  header: string | undefined,
  query: string | null | undefined,
): Budget {
  const fallback = TIMEOUT_CLASSES[timeout];
  const [field, raw] = header !== undefined ? [TIMEOUT_HEADER, header] : [TIMEOUT_QUERY, query];
  if (raw === null || raw === undefined) return { ok: true, seconds: fallback };
  const text = raw.trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= TIMEOUT_MIN_S && seconds <= TIMEOUT_MAX_S)) {
    return {
      ok: false,
      seconds: fallback,
      message: `${field}: must be a number of seconds from ${TIMEOUT_MIN_S} to ${TIMEOUT_MAX_S}`,
    };
  }
  return { ok: true, seconds };
}

interface Route {
  method: string;
  pattern: RegExp;
  literals: number;
  entry: Operation;
}

let routes: Route[] | undefined;

/** The catalog entry a method and path address (a literal segment wins over a parameter), if any. */
export function operationAt(method: string, path: string): Operation | undefined {
  routes ??= catalog.map((entry) => {
    const segments = entry.path.split('/');
    const pattern = new RegExp(
      `^${segments.map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}/?$`,
    );
    return { method: entry.method, pattern, literals: segments.filter((s) => !s.startsWith('{')).length, entry };
  });
  let best: Route | undefined;
  for (const r of routes) {
    if (r.method === method && r.pattern.test(path) && (!best || r.literals > best.literals)) best = r;
  }
  return best?.entry;
}

/**
 * Puts `X-Request-Timeout-Applied` on every answer that lacks it: the budget of the addressed operation's class (the
 * valid requested value, else the class default); a path no operation serves counts as a read.
 */
export function timeoutApplied(): MiddlewareHandler {
  return async function timeoutApplied(c, next) {
    await next();
    if (c.res.headers.has(TIMEOUT_APPLIED_HEADER)) return;
    const entry = operationAt(c.req.method, c.req.path);
    const budget = resolveBudget(
      entry?.timeout ?? 'read',
      c.req.header(TIMEOUT_HEADER),
      new URL(c.req.url).searchParams.get(TIMEOUT_QUERY),
    );
    c.header(TIMEOUT_APPLIED_HEADER, String(budget.seconds));
  };
}
