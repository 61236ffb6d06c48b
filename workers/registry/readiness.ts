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
 * each change of the reason is logged once: at info while the registry is being set up (a setup step holds it, or
 * nothing is in it yet: every fresh registry before its first migration), at warn otherwise (migrations missing with
 * no step at work on them, or D1 failing).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.js';
import { REGISTRY_MIGRATIONS } from './migrationNames.js';
import { refuse } from '../envelope/index.js';

/** `settingUp`: a setup step is at work on the registry (or has yet to begin on an empty one), so not ready is expected. */
export type Readiness =
  | { ready: true }
  | { ready: false; reason: string; settingUp: boolean; held?: true; failed?: true };

/**
 * Which of the readiness tables exist, then the holds, then how many of this worker's migrations are recorded: a
 * hold is looked at first, since the migrations it covers are expected to be missing.
 */
export async function registryReadiness(db: D1Database): Promise<Readiness> {
  try {
    const tables = new Set(
      (
        await db
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('d1_migrations', 'registry_holds')",
          )
          .all<{ name: string }>()
      ).results.map((r) => r.name),
    );
    if (tables.size === 0) return { ready: false, reason: 'nothing migrated yet', settingUp: true };
    if (tables.has('registry_holds')) {
      const held = await db
        .prepare("SELECT group_concat(name, ', ') AS holds FROM registry_holds")
        .first<{ holds: string | null }>();
      if (held?.holds) return { ready: false, reason: `held by ${held.holds}`, settingUp: true, held: true };
    }
    const row = await db
      .prepare(
        `SELECT COUNT(*) AS applied FROM d1_migrations WHERE name IN (${REGISTRY_MIGRATIONS.map(() => '?').join(', ')})`,
      )
      .bind(...REGISTRY_MIGRATIONS)
      .first<{ applied: number }>();
    const applied = Number(row?.applied ?? 0);
    if (applied < REGISTRY_MIGRATIONS.length)
      return {
        ready: false,
        reason: `${applied} of ${REGISTRY_MIGRATIONS.length} migrations applied`,
        settingUp: false,
      };
    if (!tables.has('registry_holds'))
      return { ready: false, reason: 'no such table: registry_holds', settingUp: false };
    return { ready: true };
  } catch (error) {
    // No d1_migrations beside the other tables (its record lost), or D1 itself failing: not ready, and worth a retry.
    return {
      ready: false,
      reason: String(error instanceof Error ? error.message : error),
      settingUp: false,
      failed: true,
    };
  }
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
/**
 * The same while the registry is being set up: a second, as long as callers are told to wait (`Retry-After`). A
 * local setup step writes to the D1 file from another process (wrangler), and a read meanwhile can find it busy.
 */
export const ASK_WHILE_SETTING_UP_MS = 1000;

let ready = false;
let asking: Promise<Readiness> | undefined;
let lastReason: string | undefined;
let notReadyUntil = 0;
let held = false;

/** The gate: every route but `/livez` (the worker alone) waits for a ready registry. */
export function requireRegistryReady(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (ready || c.req.path === '/livez') return next();
    if (Date.now() < notReadyUntil) return registryNotReady(c);
    asking ??= registryReadiness(c.env.DB).finally(() => {
      asking = undefined;
    });
    const readiness = await asking;
    if (readiness.ready) {
      ready = true;
      return next();
    }
    // A read failing just after the registry was seen held is taken as the holding step at work on the file.
    held = readiness.held === true || (held && readiness.failed === true);
    const settingUp = readiness.settingUp || held;
    notReadyUntil = Date.now() + (settingUp ? ASK_WHILE_SETTING_UP_MS : ASK_EVERY_MS);
    if (readiness.reason !== lastReason) {
      lastReason = readiness.reason;
      const line = JSON.stringify({
        level: settingUp ? 'info' : 'warn',
        msg: 'the registry is not ready',
        traceId: c.get('traceId'),
        reason: readiness.reason,
      });
      if (settingUp) console.log(line);
      else console.error(line);
    }
    return registryNotReady(c);
  };
}
