/**
 * The edge app: trace context first (every answer, even a refusal, carries `traceparent`), one access-log line per
 * request and `Retry-After` on every 503/504, the registry's readiness gate (503 `RegistryNotReady` on every route
 * but `/livez` until it is migrated and seeded), the unauthenticated liveness, health, discovery and document routes,
 * then the token-guarded API: registry routes and the catalog's operation routes. Bodies are bounded before anything
 * reads them; a body that cannot be read to its end (broken chunked framing, a caller gone mid-body) is a `Validation`
 * refusal logged at debug level, never an internal error. Every answer under /api/, the guard's refusals included,
 * carries `X-Request-Timeout-Applied`. Every refusal, here and in the routes, is answered through `refuse`
 * (envelope/refusal.ts), which shapes it for the route's generation.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from './env.js';
import { authRoutes, requireToken } from './auth/index.js';
import { registryRoutes } from './registry/index.js';
import { auditRoutes } from './audit/auditRoutes.js';
import { webhookRoutes } from './webhooks/webhookRoutes.js';
import { catalogRoutes, honoPath, traceContext } from './api/index.js';
import { catalog } from '../shared/catalog/index.js';
import { timeoutApplied } from './api/timeout.js';
import { accessLog } from './api/accessLog.js';
import { retryAfter } from './api/retryAfter.js';
import { refuse } from './envelope/index.js';
import { apiRateLimit } from './limits/rateLimit.js';
import { healthz } from './health/index.js';
import { registryNotMigrated } from './registry/notMigrated.js';
import { registryNotReady, requireRegistryReady } from './registry/readiness.js';
import { openApiJson } from './openapi/index.js';
import { streamRoutes } from './streams/routes.js';
import { cors } from './api/cors.js';
import { callerRegion } from './regions/callerRegion.js';
import { docsRoutes } from './docs/index.js';
import { terminalRoutes } from './terminal/terminal.js';
import { metricsRoutes } from './metrics/edgeMetrics.js';
import { bodyNotRead, UNREADABLE_BODY } from './api/requestBody.js';

/**
 * JSON bodies up to 1 MiB unless the operation's catalog entry declares its own bound (`bodyLimitBytes`: the restore
 * batches of up to 10000 full records); anything larger is refused unread.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How much of a refused body is read and dropped before the refusal is answered (`drainBody`). */
export const DRAIN_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Reads and drops what is left of a refused request body, up to `maxBytes`, without keeping any of it: a connection
 * closed while the caller is still sending is reset, and the caller then loses the answer (a client sees a reset
 * instead of the refusal naming the bound). A body beyond `maxBytes` is left unread: past that, a reset is its answer.
 */
export async function drainBody(request: Request, maxBytes = DRAIN_BODY_BYTES): Promise<void> {
  try {
    const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = request.body?.getReader();
    if (!reader) return;
    for (let seen = 0; ; ) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
      if (seen > maxBytes) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // Already read (a streamed body counted past its bound), or the caller went away.
  }
}

/** The body bound of each request whose operation declares one, set by its route's marker before the bound applies. */
const declaredBodyLimits = new WeakMap<Request, number>();

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', traceContext());
  app.use('*', accessLog());
  app.use('*', retryAfter());
  // Browser clients on other origins (CORS_ORIGINS): preflights are answered here, before any token check.
  app.use('*', cors());
  // Every request's region (docs/regions.md), named on its answer.
  app.use('*', callerRegion());
  // Nothing but liveness is served until the registry is migrated and no setup step holds it.
  app.use('*', requireRegistryReady());

  // The benchmark's baseline: nothing but the router and the trace middleware.
  app.get('/livez', (c) => c.text('ok'));
  app.get('/healthz', healthz);
  app.get('/openapi.json', openApiJson);
  app.route('/', docsRoutes());
  app.route('/', terminalRoutes());
  app.route('/', metricsRoutes());
  app.route('/', authRoutes());

  app.use('/api/*', timeoutApplied());
  app.use('/api/*', requireToken());
  app.use('/api/*', apiRateLimit());
  // Operations with a body bound of their own mark their requests (the router matches them as it matches the route).
  for (const entry of catalog) {
    const limit = entry.bodyLimitBytes;
    if (limit === undefined) continue;
    app.on(entry.method, honoPath(entry.path), async (c, next) => {
      declaredBodyLimits.set(c.req.raw, limit);
      await next();
    });
  }
  const limiters = new Map<number, MiddlewareHandler<AppEnv>>();
  const limiter = (maxSize: number) => {
    let handler = limiters.get(maxSize);
    if (!handler) {
      handler = bodyLimit({
        maxSize,
        onError: async (c) => {
          await drainBody(c.req.raw);
          return refuse(c, { kind: 'PayloadTooLarge', message: `body: must be at most ${maxSize} bytes` });
        },
      });
      limiters.set(maxSize, handler);
    }
    return handler;
  };
  // A GET or HEAD has no body to bound (not even asked for: reading `body` makes a stream object). A chunked body is
  // read here, to count it: a read that fails before the route is reached is the caller's framing or connection.
  app.use('/api/*', async (c: Context<AppEnv, string>, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD') return next();
    let reached = false;
    try {
      return await limiter(declaredBodyLimits.get(c.req.raw) ?? MAX_BODY_BYTES)(c, () => {
        reached = true;
        return next();
      });
    } catch (error) {
      if (reached) throw error;
      bodyNotRead(c, error);
      return refuse(c, { kind: 'Validation', message: UNREADABLE_BODY });
    }
  });
  // Live streams: SSE under /api/ (token checked above) and the SignalR hubs under /hubs/ (they check it themselves).
  app.route('/', streamRoutes());
  app.route('/', registryRoutes());
  app.route('/', auditRoutes());
  app.route('/', webhookRoutes());
  app.route('/', catalogRoutes());

  // A v2 caller reads every answer as an envelope, an unknown route included.
  app.notFound((c) => refuse(c, { kind: 'NotFound', message: `no route for ${c.req.method} ${c.req.path}` }));
  app.onError((err, c) => {
    if (registryNotMigrated(err)) {
      // The registry's tables are not there yet: `npm start` migrating it, or a deployment whose migrations were not
      // applied. Worth a retry, unlike an internal error.
      console.error(
        JSON.stringify({ msg: 'the registry is not migrated', traceId: c.get('traceId'), error: String(err) }),
      );
      return registryNotReady(c);
    }
    console.error(JSON.stringify({ msg: 'unhandled edge error', traceId: c.get('traceId'), error: String(err) }));
    return refuse(c, { kind: 'Internal', message: 'internal error' });
  });
  return app;
}
