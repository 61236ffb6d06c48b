/**
 * Whether the registry is ready to be served, and the gate that keeps the edge shut until it is. The registry is
 * ready when wrangler's `d1_migrations` records every migration this worker was built with (`REGISTRY_MIGRATIONS` of
 * `migrationNames.ts`, kept equal to the files in `migrations/` by a test) and no setup step holds it
 * (`registry_holds` is empty: `npm start` holds it while it migrates and seeds the demo). Until then every route but
 * `/livez` answers 503 `RegistryNotReady` with `Retry-After: 1`, so neither a half-migrated schema nor an unseeded
 * registry is ever served: not even a query that happens to succeed against the part already there.
 *
 * Ready is final for an isolate (migrations are never taken back): once seen, the gate costs nothing. Before that,
 * D1 is asked at most once every ASK_EVERY_MS per isolate (concurrent requests share the question, later ones in that
 * time take its answer), so callers polling a starting edge do not keep the D1 file busy while it is being migrated;
 * each change of the reason is logged once.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';
import { REGISTRY_MIGRATIONS } from './migrationNames.js';
import { refuse } from '../envelope/index.js';

export type Readiness = { ready: true } | { ready: false; reason: string };

/** One query: how many of this worker's migrations are recorded, and which setup steps hold the registry. */
export async function registryReadiness(db: D1Database): Promise<Readiness> {
  let row: { applied: number; holds: string | null } | null;
  try {
    row = await db.prepare(
      `SELECT (SELECT COUNT(*) FROM d1_migrations WHERE name IN (${REGISTRY_MIGRATIONS.map(() => '?').join(', ')})) AS applied,
              (SELECT group_concat(name, ', ') FROM registry_holds) AS holds`,
    ).bind(...REGISTRY_MIGRATIONS).first<{ applied: number; holds: string | null }>();
  } catch (error) {
    // No d1_migrations (nothing applied yet) or no registry_holds (the migration creating it not applied yet), or D1
    // itself failing: not ready either way, and worth a retry.
    return { ready: false, reason: String(error instanceof Error ? error.message : error) };
  }
  const applied = Number(row?.applied ?? 0);
  if (applied < REGISTRY_MIGRATIONS.length) return { ready: false, reason: `${applied} of ${REGISTRY_MIGRATIONS.length} migrations applied` };
  if (row?.holds) return { ready: false, reason: `held by ${row.holds}` };
  return { ready: true };
}

/** The answer of every route while the registry is not ready (and of a registry query that finds a table missing). */
export function registryNotReady(c: Context<AppEnv>): Response {
  return refuse(c, {
    kind: 'RegistryNotReady',
    message: 'the platform registry is not ready yet: retry shortly',
    headers: { 'Retry-After': '1', 'cache-control': 'no-store' },
  });
}

/** How long a "not ready" answer is taken as it is before D1 is asked again. */
export const ASK_EVERY_MS = 250;

let ready = false;
let asking: Promise<Readiness> | undefined;
let lastReason: string | undefined;
let notReadyUntil = 0;

/** The gate: every route but `/livez` (the worker alone) waits for a ready registry. */
export function requireRegistryReady(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (ready || c.req.path === '/livez') return next();
    if (Date.now() < notReadyUntil) return registryNotReady(c);
    asking ??= registryReadiness(c.env.DB).finally(() => { asking = undefined; });
    const readiness = await asking;
    if (readiness.ready) {
      ready = true;
      return next();
    }
    notReadyUntil = Date.now() + ASK_EVERY_MS;
    if (readiness.reason !== lastReason) {
      lastReason = readiness.reason;
      console.error(JSON.stringify({ level: 'warn', msg: 'the registry is not ready', traceId: c.get('traceId'), reason: readiness.reason }));
    }
    return registryNotReady(c);
  };
}
