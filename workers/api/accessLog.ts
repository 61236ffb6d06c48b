/**
 * One structured access-log line per edge request, written when the answer is ready: the trace id (the same one the
 * caller sees as `meta.activityId` / `traceparent` and the broker logs), the API client (once its token is
 * verified), the operation addressed (the catalog id for operation routes, else the route pattern; null for an
 * unknown route), the HTTP status, the outcome (`ok`, the v2 error code, or a word for the status) and the duration.
 * Deliberately nothing from the request itself beyond the method: no path parameters, query, headers or body, so no
 * token, client secret, password or account number can reach a log line.
 *
 * Lines go to `console.log` as JSON: Workers Logs (`[observability]` in wrangler.toml) indexes their fields; locally
 * the launcher reads them from workerd's output. A `console.log` call costs about as much as a whole bare request
 * (docs/perf/2026-11-23-edge-request-time.md), so by default an isolate writes its lines in batches, one per line of text,
 * `ACCESS_LOG_FLUSH_MS` (100 ms) after the first of a batch, or at once when `MAX_BATCH` lines wait;
 * `ACCESS_LOG_BATCH=1` writes each line on its own call, for a log service that reads one call as one record.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { generationOf, outcomeOf, statusOutcome } from '../envelope/index.js';
import { forwardedOperations, honoPath } from './catalogRoutes.js';
import { countRequest } from '../metrics/edgeMetrics.js';

export interface AccessLogLine {
  msg: 'request';
  traceId: string;
  clientId: string | null;
  method: string;
  operation: string | null;
  status: number;
  outcome: string;
  ms: number;
}

/** How long a line may wait for others to share its `console.log` call. */
export const ACCESS_LOG_FLUSH_MS = 100;
/** Most lines that wait: past it they are written at once. */
const MAX_BATCH = 1000;

export function accessLog(write: (line: string) => void = (line) => console.log(line)): MiddlewareHandler<AppEnv> {
  const waiting: string[] = [];
  let flushing = false;
  const flush = () => {
    if (waiting.length) write(waiting.join('\n'));
    waiting.length = 0;
  };
  /** Queues a line; the request that queues the first of a batch writes it, kept open by `waitUntil` until then. */
  const queue = (c: Context<AppEnv>, text: string) => {
    waiting.push(text);
    if (waiting.length >= MAX_BATCH) {
      flush();
      return;
    }
    if (flushing) return;
    flushing = true;
    const written = new Promise<void>((resolve) =>
      setTimeout(() => {
        flushing = false;
        flush();
        resolve();
      }, ACCESS_LOG_FLUSH_MS),
    );
    try {
      c.executionCtx.waitUntil(written);
    } catch {
      // No execution context (an app run outside a worker): the timer still writes the batch.
    }
  };

  let operationIds: Map<string, string> | undefined;
  const operationOf = (c: Context<AppEnv>): string | null => {
    // The first handler the router matched (middleware are registered on wildcard paths, handlers never are); the
    // request may have been answered before it (a refused token), and the line still says what was addressed.
    const route = matchedRoutes(c).find((r) => !r.path.endsWith('*'));
    if (!route) return null;
    operationIds ??= new Map(forwardedOperations().map((e) => [`${e.method} ${honoPath(e.path)}`, e.id]));
    return operationIds.get(`${route.method} ${route.path}`) ?? `${c.req.method} ${route.path}`;
  };

  return async (c, next) => {
    const started = Date.now();
    await next();
    const status = c.res.status;
    const line: AccessLogLine = {
      msg: 'request',
      traceId: c.get('traceId'),
      clientId: c.get('caller')?.clientId ?? null,
      method: c.req.method,
      operation: c.get('operation') ?? operationOf(c),
      status,
      outcome: c.get('outcome') ?? (await peekOutcome(c, status)),
      ms: Date.now() - started,
    };
    const config = configOf(c.env);
    // Counted for the edge's /metrics only when it is served.
    if (config.METRICS_TOKEN)
      countRequest(line.operation, line.outcome, status, line.ms / 1000, c.req.raw.headers, c.res.headers);
    if (config.ACCESS_LOG_BATCH) write(JSON.stringify(line));
    else queue(c, JSON.stringify(line));
  };
}

/**
 * The outcome of an answer no operation route shaped (registry reads, the edge's own v2 refusals): a v2 answer is
 * read from a copy of its body, which is small on those routes; anything else by its status.
 */
async function peekOutcome(c: Context<AppEnv>, status: number): Promise<string> {
  const v2Envelope =
    status === 200 && generationOf(c.req.path) === 'v2' && (c.res.headers.get('content-type') ?? '').includes('json');
  if (!v2Envelope) return statusOutcome(status);
  try {
    return outcomeOf(status, await c.res.clone().text(), 'v2');
  } catch {
    return 'ok';
  }
}
