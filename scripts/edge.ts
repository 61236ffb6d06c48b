/**
 * The edge runtime outside Cloudflare: bundles the worker with esbuild and runs it in local workerd through the
 * Miniflare API (no wrangler proxy in the request path), with the D1 registry migrated and the gateway Durable
 * Objects bound (link objects, idempotency ledgers). Used by `npm start`, the benchmark, the registry CLI and the tests.
 */
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ensurePrivateDir, tightenTree, withOwnerOnlyUmask } from './privateData.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const WORKER_ENTRY = join(root, 'workers/index.ts');
export const MIGRATIONS_DIR = join(root, 'workers/registry/migrations');
export const COMPATIBILITY_DATE = '2025-09-01';

export interface EdgeOptions {
  port?: number;
  host?: string;
  /** Folder for the D1 registry and Durable Object storage; omit for an in-memory edge (tests). */
  dataDir?: string;
  /** Worker variables (see README's configuration table). */
  vars?: Record<string, string>;
  /**
   * Receives the worker's output line by line: its access log and other `console.log` lines (`stdout`), its errors
   * (`stderr`). Without it errors go to this process's standard error and the access log is dropped, so test runs
   * are not flooded with one line per request.
   */
  log?: (line: string, stream: 'stdout' | 'stderr') => void;
}

export interface Edge {
  url: URL;
  miniflare: Miniflare;
  db(): Promise<D1Like>;
  close(): Promise<void>;
}

/** The subset of D1 the scripts and tests use. */
export interface D1Like {
  prepare(sql: string): { bind(...values: unknown[]): D1Stmt } & D1Stmt;
  exec(sql: string): Promise<unknown>;
  batch(statements: D1Stmt[]): Promise<unknown>;
}
interface D1Stmt {
  run(): Promise<unknown>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
}

let bundled: Promise<string> | undefined;

/** Bundles workers/index.ts into one ES module (cached for the process). */
export function buildWorker(): Promise<string> {
  bundled ??= build({
    entryPoints: [WORKER_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    write: false,
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
    external: ['cloudflare:*'],
  }).then((r) => r.outputFiles[0].text);
  return bundled;
}

export function miniflareOptions(script: string, options: EdgeOptions) {
  const persist = options.dataDir ? resolve(options.dataDir) : undefined;
  if (persist) ensurePrivateDir(persist);
  return {
    modules: [{ type: 'ESModule' as const, path: 'worker.js', contents: script }],
    compatibilityDate: COMPATIBILITY_DATE,
    host: options.host ?? '127.0.0.1',
    // Miniflare's own entry socket, on any free port: dispatchFetch and Miniflare's internals use it.
    port: 0,
    // Callers come in on a socket straight to the worker. Miniflare's entry worker in front of it (request.cf, dev
    // routing, error pages: nothing the edge uses) costs about 230 µs of edge CPU per request, three times what the
    // bare route costs on its own (`npm run bench:profile`).
    unsafeDirectSockets: [{ host: options.host ?? '127.0.0.1', port: options.port ?? 0 }],
    bindings: options.vars ?? {},
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      const log = options.log ?? ((line: string, stream: 'stdout' | 'stderr') => {
        if (stream === 'stderr') process.stderr.write(`${line}\n`);
      });
      createInterface({ input: stdout }).on('line', (line) => log(line, 'stdout'));
      createInterface({ input: stderr }).on('line', (line) => log(line, 'stderr'));
    },
    d1Databases: { DB: 'registry' },
    durableObjects: {
      LINKS: { className: 'PlatformLink', useSQLite: true },
      IDEMPOTENCY: { className: 'IdempotencyLedger', useSQLite: true },
      RATE_LIMITER: 'ClientRateLimiter',
    },
    d1Persist: persist ? join(persist, 'd1') : false,
    durableObjectsPersist: persist ? join(persist, 'do') : false,
  };
}

/** Applies every migration not yet applied, in file-name order, recording them the way wrangler does. */
export async function applyMigrations(db: D1Like): Promise<string[]> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)',
  );
  const done = new Set((await db.prepare('SELECT name FROM d1_migrations').all<{ name: string }>()).results.map((r) => r.name));
  const applied: string[] = [];
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
    if (done.has(file)) continue;
    const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
    const statements: D1Stmt[] = splitStatements(sql).map((s) => db.prepare(s));
    statements.push(db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(file));
    await db.batch(statements);
    applied.push(file);
  }
  return applied;
}

/** Splits a migration into statements; migrations keep one statement per `;`-terminated block, no `;` in literals. */
function splitStatements(sql: string): string[] {
  return sql
    .split('\n').filter((l) => !l.trim().startsWith('--')).join('\n')
    .split(';').map((s) => s.trim()).filter(Boolean);
}

export async function startEdge(options: EdgeOptions = {}): Promise<Edge> {
  const script = await buildWorker();
  const { miniflare, url } = await startMiniflare(miniflareOptions(script, options));
  const db = async () => (await miniflare.getD1Database('DB')) as unknown as D1Like;
  await applyMigrations(await db());
  if (options.dataDir) tightenTree(resolve(options.dataDir));
  return { url, miniflare, db, close: () => miniflare.dispose() };
}

/**
 * Starts workerd through Miniflare under the owner-only umask, so the registry and Durable Object files it creates
 * in a data folder are readable by this user alone.
 */
export async function startMiniflare(options: ReturnType<typeof miniflareOptions>): Promise<{ miniflare: Miniflare; url: URL }> {
  return withOwnerOnlyUmask(async () => {
    const miniflare = new Miniflare(options);
    try {
      return { miniflare, url: await miniflare.ready };
    } catch (error) {
      await miniflare.dispose().catch(() => {});
      throw error;
    }
  });
}
