/**
 * The edge runtime outside Cloudflare: bundles the worker with esbuild and runs it in local workerd through the
 * Miniflare API (neither wrangler's proxy nor Miniflare's entry worker in the request path), with the D1 registry
 * migrated and the gateway Durable Objects bound (link objects, idempotency ledgers). Used by `npm start`, the
 * benchmark, the registry CLI and the tests.
 */
import { Miniflare } from 'miniflare';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ensurePrivateDir, tightenTree, withOwnerOnlyUmask } from './privateData.js';
import { textModules } from './workerAssets.js';
import { bundled } from './bundles.js';
import { readWranglerConfig, sqliteClasses } from './wranglerToml.js';
import { z } from 'zod';
import { localEdgeVariables, readEnvironment, type EnvironmentRecord } from '../shared/environment.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The worker's top level in wrangler.toml (local development): everything the local edge binds is read from it. */
export const WRANGLER = readWranglerConfig(join(root, 'wrangler.toml'));
const REGISTRY_DB = WRANGLER.d1_databases[0];
export const WORKER_ENTRY = join(root, WRANGLER.main);
/**
 * The objects worker's entry: the Durable Object classes without the app's routes and assets, which would double what
 * workerd compiles and Miniflare writes into its configuration at every start of an edge.
 */
export const OBJECTS_ENTRY = join(root, 'workers', 'objects.ts');
export const MIGRATIONS_DIR = join(root, REGISTRY_DB.migrations_dir);
export const COMPATIBILITY_DATE = WRANGLER.compatibility_date;

export interface EdgeOptions {
  port?: number;
  host?: string;
  /** Folder for the D1 registry and Durable Object storage; omit for an in-memory edge (tests). */
  dataDir?: string;
  /** Worker variables (see docs/operating.md, "Configuration"). */
  vars?: Record<string, string>;
  /**
   * Receives the worker's output line by line: its access log and other `console.log` lines (`stdout`), its errors
   * (`stderr`). Without it errors go to this process's standard error and the access log is dropped, so test runs
   * are not flooded with one line per request.
   */
  log?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Another entry module to bundle instead of workers/index.ts, and a line put before the bundle: mutation testing
   * runs the worker with its coverage route and its active mutant (test/mutation/).
   */
  entry?: string;
  prelude?: string;
  /**
   * Fills the registry once it is migrated, before the edge serves it (npm start's demo organization, platforms and
   * client). The registry is held from before the migrations until this is done (see `holdRegistry`).
   */
  populate?: (db: D1Like) => Promise<void>;
  /** Told each step of the registry's setup as it begins and ends, in a line for a person (`npm start` prints them). */
  progress?: (message: string) => void;
  /** Open workerd's inspector on a free local port (`miniflare.getInspectorURL()`): `npm run soak` reads the isolates' heaps. */
  inspect?: boolean;
}

export interface Edge {
  url: URL;
  /** With another entry module (mutation testing): the objects worker's own socket, where its coverage is asked. */
  objectsUrl?: URL;
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

const scripts = new Map<string, Promise<string>>();

/** Bundles workers/index.ts (or another entry) into one ES module (cached for the process, and on disk: launcher/bundles.ts). */
export function buildWorker(entry = WORKER_ENTRY): Promise<string> {
  const cached = scripts.get(entry);
  if (cached) return cached;
  const script = bundled(entry, 'worker', '.js', {
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: false,
    sourcemap: false,
    external: ['cloudflare:*'],
    // The /docs page's Swagger UI files, imported as text (wrangler.toml's Text rule does the same for wrangler).
    plugins: [textModules],
  }).then((path) => readFileSync(path, 'utf8'));
  scripts.set(entry, script);
  return script;
}

/** The worker that serves callers (the first, so Miniflare's binding helpers read its bindings). */
export const EDGE_WORKER = 'edge';

/**
 * The worker that hosts the edge's Durable Objects locally: the same bundle as the edge worker, in an isolate of its
 * own, as on Cloudflare, where an object runs apart from the requests that call it. With the objects in the requests'
 * isolate, local workerd served object calls more slowly and, once its thread was busy, kept some requests waiting
 * far longer than others (docs/perf/2026-11-27-edge-objects-isolate.md).
 */
export const OBJECTS_WORKER = 'objects';

/**
 * The Durable Object bindings of both workers, wrangler.toml's `[[durable_objects.bindings]]`: every class defined by
 * the objects worker, with SQLite storage where wrangler.toml's migrations give the class SQLite.
 */
const sqlite = sqliteClasses(WRANGLER);
const durableObjects: Record<
  string,
  { className: string; scriptName: string; useSQLite?: boolean; unsafeUniqueKey: string }
> = Object.fromEntries(
  WRANGLER.durable_objects.bindings.map(({ name, class_name: className }) => [
    name,
    {
      className,
      scriptName: OBJECTS_WORKER,
      ...(sqlite.has(className) ? { useSQLite: true } : {}),
      // The storage folder and the ids of named objects derive from this key: the one objects had while the edge ran as
      // a single unnamed worker, so a data folder from then keeps its idempotency records.
      unsafeUniqueKey: `-${className}`,
    },
  ]),
);

/**
 * wrangler.toml's queues as Miniflare takes them: the producers bound in both workers (an object sends as the worker it
 * belongs to), and the consumers in the edge worker, whose `queue` handler takes every batch (workers/index.ts).
 */
const queueProducers = Object.fromEntries(
  (WRANGLER.queues?.producers ?? []).map(({ binding, queue }) => [binding, { queueName: queue }]),
);
const queueConsumers = Object.fromEntries(
  (WRANGLER.queues?.consumers ?? []).map((c) => [
    c.queue,
    {
      ...(c.max_batch_size !== undefined ? { maxBatchSize: c.max_batch_size } : {}),
      ...(c.max_batch_timeout !== undefined ? { maxBatchTimeout: c.max_batch_timeout } : {}),
      ...(c.max_retries !== undefined ? { maxRetries: c.max_retries } : {}),
      ...(c.dead_letter_queue !== undefined ? { deadLetterQueue: c.dead_letter_queue } : {}),
    },
  ]),
);

/** Without `options.dataDir`, the objects' storage goes to `memoryFolder` (`startEdge` makes and removes it), else Miniflare's own. */
export function miniflareOptions(
  script: string,
  options: EdgeOptions,
  memoryFolder?: string,
  objectsScript: string = script,
) {
  const persist = options.dataDir ? resolve(options.dataDir) : undefined;
  if (persist) ensurePrivateDir(persist);
  // What both workers see, as on Cloudflare, where an object has the bindings of the worker it belongs to.
  const worker = {
    modules: [{ type: 'ESModule' as const, path: 'worker.js', contents: script }],
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: options.vars ?? {},
    d1Databases: { [REGISTRY_DB.binding]: LOCAL_D1_ID },
    durableObjects,
    queueProducers,
  };
  return {
    host: options.host ?? '127.0.0.1',
    // Miniflare's own entry socket, on any free port: dispatchFetch and Miniflare's internals use it.
    port: 0,
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      const log =
        options.log ??
        ((line: string, stream: 'stdout' | 'stderr') => {
          if (stream === 'stderr') process.stderr.write(`${line}\n`);
        });
      createInterface({ input: stdout }).on('line', (line) => log(line, 'stdout'));
      createInterface({ input: stderr }).on('line', (line) => log(line, 'stderr'));
    },
    workers: [
      {
        ...worker,
        name: EDGE_WORKER,
        queueConsumers,
        // Callers come in on a socket straight to the worker. Miniflare's entry worker in front of it (request.cf, dev
        // routing, error pages: nothing the edge uses) costs more edge CPU per request than the bare route itself
        // (docs/perf/2026-11-27-figures-behind-defaults.md).
        unsafeDirectSockets: [{ host: options.host ?? '127.0.0.1', port: options.port ?? 0 }],
      },
      {
        ...worker,
        // The objects' classes alone (workers/objects.ts) unless the edge runs another entry.
        modules: [{ type: 'ESModule' as const, path: 'worker.js', contents: objectsScript }],
        name: OBJECTS_WORKER,
        // Under mutation testing the objects' isolate counts coverage of its own, asked for on this socket.
        ...(options.entry !== undefined
          ? { unsafeDirectSockets: [{ host: options.host ?? '127.0.0.1', port: 0 }] }
          : {}),
      },
      // Reached only through Miniflare's own API (`objectCall`), never through the edge's socket.
      {
        name: INSPECT_WORKER,
        modules: [{ type: 'ESModule' as const, path: 'inspect.js', contents: INSPECT_WORKER_SCRIPT }],
        compatibilityDate: COMPATIBILITY_DATE,
        durableObjects,
      },
      // Reached only through Miniflare's own API (`registryDb`), never through the edge's socket.
      {
        name: REGISTRY_WORKER,
        modules: [{ type: 'ESModule' as const, path: 'registry.js', contents: REGISTRY_WORKER_SCRIPT }],
        compatibilityDate: COMPATIBILITY_DATE,
        d1Databases: { DB: LOCAL_D1_ID },
      },
    ],
    // wrangler's local layout (`--persist-to <dataDir>` puts D1 under v3/d1), so `wrangler d1 migrations list --local`
    // and `wrangler dev` open this very registry file (same database id: preview_database_id in wrangler.toml).
    d1Persist: persist ? wranglerD1Dir(persist) : false,
    durableObjectsPersist: persist ? join(persist, 'do') : (memoryFolder ?? false),
    ...(options.inspect ? { inspectorPort: 0 } : {}),
  };
}

/**
 * The registry as scripts and tests in Node reach it. Miniflare's own D1 handle makes `prepare` and `bind` synchronous
 * round trips (a worker thread and `Atomics.wait`), and with this Miniflare a late wake-up of one of them can hand the
 * next call no answer (an assertion failure inside Miniflare, seen starting an edge on a busy machine). This worker
 * runs statements built in Node instead, over asynchronous fetches only: `prepare` and `bind` are local, `run`,
 * `first`, `all`, `batch` and `exec` one request each, with D1's own answers and error messages.
 */
export const REGISTRY_WORKER = 'registry';
const REGISTRY_WORKER_SCRIPT = `export default {
  async fetch(request, env) {
    const { mode, sql, statements } = await request.json();
    try {
      const prepared = (statements ?? []).map((s) => env.DB.prepare(s.sql).bind(...s.params));
      const result = mode === 'exec' ? await env.DB.exec(sql)
        : mode === 'batch' ? await env.DB.batch(prepared)
        : mode === 'first' ? await prepared[0].first()
        : mode === 'all' ? await prepared[0].all()
        : await prepared[0].run();
      return Response.json({ result: result ?? null });
    } catch (error) {
      return Response.json({ error: String(error && error.message || error) }, { status: 500 });
    }
  },
};`;

/** A D1 handle for Node on the registry worker of an edge started with `miniflareOptions` (see REGISTRY_WORKER). */
export function registryDb(miniflare: Miniflare): D1Like {
  let worker: ReturnType<Miniflare['getWorker']> | undefined;
  const call = async (body: object): Promise<unknown> => {
    const fetcher = await (worker ??= miniflare.getWorker(REGISTRY_WORKER));
    const res = await fetcher.fetch('http://registry.internal/', { method: 'POST', body: JSON.stringify(body) });
    const answer = (await res.json()) as { result?: unknown; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.result;
  };
  type Stmt = ReturnType<D1Like['prepare']> & { sql: string; params: unknown[] };
  const statement = (sql: string, params: unknown[]): Stmt => ({
    sql,
    params,
    bind: (...values: unknown[]) => statement(sql, values),
    run: () => call({ mode: 'run', statements: [{ sql, params }] }),
    first: <T>() => call({ mode: 'first', statements: [{ sql, params }] }) as Promise<T | null>,
    all: <T>() => call({ mode: 'all', statements: [{ sql, params }] }) as Promise<{ results: T[] }>,
  });
  return {
    prepare: (sql) => statement(sql, []),
    exec: (sql) => call({ mode: 'exec', sql }),
    batch: (statements) =>
      call({ mode: 'batch', statements: (statements as Stmt[]).map(({ sql, params }) => ({ sql, params })) }),
  };
}

/**
 * A read of the local edge's gateway objects for drills and tests in Node: one method (without arguments) of one named
 * object, over an asynchronous fetch to a worker of its own that holds the objects' bindings. Miniflare's own object
 * stubs reach an object through synchronous round trips, which under a steady poll met the same lost wake-up as its
 * D1 handle (see REGISTRY_WORKER). Local only: a deployed edge has no such worker.
 */
export const INSPECT_WORKER = 'inspect';
const INSPECT_WORKER_SCRIPT = `export default {
  async fetch(request, env) {
    const { binding, jurisdiction, name, method, args } = await request.json();
    try {
      // A local workerd cannot restrict a namespace: a jurisdiction's objects are named apart (workers/regions/objects.ts).
      const namespace = env[binding];
      const id = jurisdiction ? namespace.idFromName(jurisdiction + ':' + name) : namespace.idFromName(name);
      const result = await namespace.get(id)[method](...(args ?? []));
      return Response.json({ result: result ?? null });
    } catch (error) {
      return Response.json({ error: String(error && error.message || error) }, { status: 500 });
    }
  },
};`;

const inspectWorkers = new WeakMap<Miniflare, ReturnType<Miniflare['getWorker']>>();

/**
 * Calls `method(...args)` on the gateway object `name` of `binding` (LINKS, STREAMS, ...) of a local edge, or of the
 * binding restricted to a jurisdiction (`{ binding, jurisdiction }`); answers its result. Arguments and result travel
 * as JSON. Asynchronous end to end, unlike a stub from Miniflare's own namespace
 * handle, whose synchronous round trips can lose an answer on a loaded machine.
 */
export async function objectCall<T>(
  miniflare: Miniflare,
  binding: string | { binding: string; jurisdiction: string },
  name: string,
  method: string,
  ...args: unknown[]
): Promise<T> {
  const where = typeof binding === 'string' ? { binding } : binding;
  let worker = inspectWorkers.get(miniflare);
  if (!worker) inspectWorkers.set(miniflare, (worker = miniflare.getWorker(INSPECT_WORKER)));
  const fetcher = await worker;
  const res = await fetcher.fetch('http://inspect.internal/', {
    method: 'POST',
    body: JSON.stringify({ ...where, name, method, args }),
  });
  const answer = (await res.json()) as { result?: T; error?: string };
  if (answer.error !== undefined) throw new Error(answer.error);
  return answer.result as T;
}

/** The local D1 id of the registry: `preview_database_id` in wrangler.toml, which wrangler's local commands use. */
export const LOCAL_D1_ID = REGISTRY_DB.preview_database_id ?? REGISTRY_DB.database_id;

/**
 * Where the registry's D1 files live under an edge data folder: wrangler's layout. A folder from before (`d1/` beside
 * `do/`) is moved there once; the file inside keeps its name, which derives from the database id alone.
 */
function wranglerD1Dir(persist: string): string {
  const current = join(persist, 'v3', 'd1');
  const previous = join(persist, 'd1');
  if (existsSync(previous) && !existsSync(current)) {
    ensurePrivateDir(join(persist, 'v3'));
    renameSync(previous, current);
  }
  return current;
}

/**
 * The migration files in the order wrangler applies them: by name, then (stably) by the number before the first `_`,
 * so `10_x.sql` follows `9_x.sql`.
 */
export function migrationFiles(): string[] {
  const number = (name: string) => Number.parseInt(name.split('_')[0], 10);
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .sort((a, b) => (number(a) < number(b) ? -1 : number(a) > number(b) ? 1 : 0));
}

/** Wrangler's record of applied migrations (`d1_migrations`, the same table and columns wrangler creates). */
const MIGRATIONS_TABLE =
  'CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)';

/** Migration files not yet recorded in `d1_migrations`, in wrangler's order. */
export async function pendingMigrations(db: D1Like): Promise<string[]> {
  await db.exec(MIGRATIONS_TABLE);
  const done = new Set(
    (await db.prepare('SELECT name FROM d1_migrations').all<{ name: string }>()).results.map((r) => r.name),
  );
  return migrationFiles().filter((f) => !done.has(f));
}

/**
 * Brings the registry up to date: the migration files not yet recorded in `d1_migrations`, applied by
 * `applyMigrations` in wrangler's order and recorded in wrangler's table and columns, so wrangler's own commands on
 * the same folder (`wrangler d1 migrations list DB --local --persist-to <folder>`) find nothing pending, and the
 * deployed database is migrated by wrangler with `--remote` from the same files. A registry kept in a data folder is
 * the file wrangler's `--persist-to` names (`miniflareOptions` hands Miniflare the same path); applying through the
 * open D1 takes milliseconds where a wrangler process takes seconds. Another process reading the file meanwhile (an
 * edge serving the folder while the registry CLI runs) can find it busy: each migration is one batch, applied whole
 * or not at all, so it is tried again. Returns the migrations applied.
 */
export async function migrateRegistry(db: D1Like, progress: (message: string) => void = () => {}): Promise<string[]> {
  const pending = await pendingMigrations(db);
  if (pending.length === 0) return [];
  progress(`migrating the registry: ${pending.length} migration${pending.length === 1 ? '' : 's'} to apply`);
  const applied = await withBusyRetries(() => applyMigrations(db));
  progress(`registry migrated: ${pending.join(', ')}`);
  return applied;
}

/**
 * Runs `run` again while it fails because SQLite found the D1 file busy (another process, an edge or the registry
 * CLI, reading the same file): up to `attempts` times, waiting a little longer each time. Local D1 sometimes reports
 * that contention only as workerd's masked "internal error; reference = ..."; a migration is applied whole or not at
 * all (its statements and its `d1_migrations` row in one batch), so running it again applies just what is still
 * pending. Any other failure, or the last busy one, is thrown.
 */
export async function withBusyRetries<T>(
  run: () => Promise<T>,
  attempts = 10,
  waitMs = (n: number) => 100 * n,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !/SQLITE_BUSY|database is locked|internal error; reference = /.test(String(error)))
        throw error;
      await new Promise((r) => setTimeout(r, waitMs(attempt)));
    }
  }
}

/** Runs wrangler (the project's own copy) non-interactively, offline: its exit code and everything it printed. */
export function runWrangler(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), ...args], {
    cwd: root,
    // Non-interactive (no confirmation prompt), no usage reports: this runs offline.
    env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, output }));
  });
}

/**
 * Applies every migration not yet applied to the registry, in wrangler's order, recording each in
 * `d1_migrations` within the same batch as its statements, as wrangler does.
 */
export async function applyMigrations(db: D1Like): Promise<string[]> {
  const applied: string[] = [];
  for (const file of await pendingMigrations(db)) {
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
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The hold `startEdge` puts on the registry while it migrates and seeds it. */
export const LAUNCHER_HOLD = 'the edge launcher (migrating and seeding)';

/**
 * Runs `prepare` with the registry held: a row in `registry_holds` (the table of migration 0004, created here first
 * when a fresh registry does not have it yet), so the edge answers every route but /livez 503 RegistryNotReady until
 * `prepare` is done (workers/registry/readiness.ts). The hold stays if `prepare` fails: a registry half set up is not
 * served; the next start takes the same hold and releases it.
 */
export async function holdRegistry(db: D1Like, prepare: () => Promise<void>): Promise<void> {
  await takeHold(db);
  await prepare();
  await db.prepare('DELETE FROM registry_holds WHERE name = ?').bind(LAUNCHER_HOLD).run();
}

async function takeHold(db: D1Like): Promise<void> {
  // One batch: the edge never sees the table without the hold (an unheld registry missing migrations is a warning).
  await db.batch([
    db.prepare('CREATE TABLE IF NOT EXISTS registry_holds (name TEXT PRIMARY KEY, since TEXT NOT NULL)'),
    db
      .prepare('INSERT OR REPLACE INTO registry_holds (name, since) VALUES (?, ?)')
      .bind(LAUNCHER_HOLD, new Date().toISOString()),
  ]);
}

/**
 * A fresh registry (a data folder without its D1 file yet) is held and migrated before the edge serves, by a workerd
 * of its own that stops before the edge starts: the edge, once up, finds the registry migrated and held until
 * `startEdge` has seeded it, and never a registry without its tables (which it would report as not ready).
 */
async function migrateFreshRegistry(dataDir: string, progress?: (message: string) => void): Promise<void> {
  const d1Persist = miniflareOptions('', { dataDir }).d1Persist as string;
  const files = join(d1Persist, 'miniflare-D1DatabaseObject');
  if (existsSync(files) && readdirSync(files).some((f) => f.endsWith('.sqlite'))) return;
  const holder = await withOwnerOnlyUmask(async () => {
    const miniflare = new Miniflare({
      host: '127.0.0.1',
      port: 0,
      workers: [
        {
          name: REGISTRY_WORKER,
          modules: [{ type: 'ESModule' as const, path: 'registry.js', contents: REGISTRY_WORKER_SCRIPT }],
          compatibilityDate: COMPATIBILITY_DATE,
          d1Databases: { DB: LOCAL_D1_ID },
        },
      ],
      d1Persist,
    });
    await miniflare.ready;
    return miniflare;
  });
  try {
    const db = registryDb(holder);
    await takeHold(db);
    await migrateRegistry(db, progress);
  } finally {
    await holder.dispose();
  }
}

/**
 * Where an edge without a data folder keeps its objects' storage: a folder of its own on the system's memory file
 * system (/dev/shm), so it stays in memory as documented. Miniflare's own choice would be files under the temporary
 * folder, usually on disk, where each of a ledger's commits waits for the disk; workerd's purely in-memory storage
 * stops the process when an alarm deletes an object's storage. Undefined where there is no such file system.
 */
function memoryFolder(): string | undefined {
  try {
    accessSync(MEMORY_ROOT, constants.W_OK);
    if (!removedOnExit) {
      process.once('exit', removeMemoryFolders);
      removedOnExit = true;
      removeOrphanedMemoryFolders(MEMORY_ROOT);
    }
    const folder = mkdtempSync(join(MEMORY_ROOT, `${MEMORY_PREFIX}${process.pid}-`));
    memoryFolders.add(folder);
    return folder;
  } catch {
    return undefined;
  }
}

const MEMORY_ROOT = '/dev/shm';
const MEMORY_PREFIX = 'gateway-edge-';

/**
 * Removes the memory folders under `root` left by processes that are gone (killed before their exit hook ran): each
 * folder's name carries the id of the process that made it. Answers the folders removed.
 */
export function removeOrphanedMemoryFolders(root: string, alive: (pid: number) => boolean = processAlive): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(/^gateway-edge-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Memory folders of edges still open: removed when the process exits without closing them (they hold memory). */
const memoryFolders = new Set<string>();
let removedOnExit = false;
function removeMemoryFolders(): void {
  for (const folder of memoryFolders) releaseMemoryFolder(folder);
}

function releaseMemoryFolder(folder: string | undefined): void {
  if (folder === undefined) return;
  rmSync(folder, { recursive: true, force: true });
  memoryFolders.delete(folder);
}

export async function startEdge(options: EdgeOptions = {}): Promise<Edge> {
  const [bundle, objectsBundle] = await Promise.all([
    buildWorker(options.entry),
    // Another entry (mutation testing, the benches' edge) runs its own objects: the same script in both workers.
    options.entry === undefined ? buildWorker(OBJECTS_ENTRY) : undefined,
    options.dataDir ? migrateFreshRegistry(options.dataDir, options.progress) : undefined,
  ]);
  const script = (options.prelude ?? '') + bundle;
  const objectsScript = objectsBundle === undefined ? script : (options.prelude ?? '') + objectsBundle;
  const memory = options.dataDir ? undefined : memoryFolder();
  const removeMemory = () => releaseMemoryFolder(memory);
  let started: { miniflare: Miniflare; url: URL };
  try {
    started = await startMiniflare(miniflareOptions(script, options, memory, objectsScript));
  } catch (error) {
    removeMemory();
    throw error;
  }
  const { miniflare, url } = started;
  const handle = registryDb(miniflare);
  const db = () => Promise.resolve(handle);
  try {
    await holdRegistry(handle, async () => {
      await migrateRegistry(handle, options.progress);
      await options.populate?.(handle);
    });
  } catch (error) {
    await miniflare.dispose().catch(() => {});
    removeMemory();
    throw error;
  }
  if (options.dataDir) tightenTree(resolve(options.dataDir));
  const objectsUrl = options.entry !== undefined ? await miniflare.unsafeGetDirectURL(OBJECTS_WORKER) : undefined;
  const stopCrons = runCrons(miniflare);
  const close = async () => {
    stopCrons();
    try {
      await miniflare.dispose();
    } finally {
      removeMemory();
    }
  };
  return { url, ...(objectsUrl ? { objectsUrl } : {}), miniflare, db, close };
}

/** How often a cron trigger of wrangler.toml fires locally: every cron the worker has runs each minute. */
const CRON_EVERY_MS = 60_000;

/**
 * wrangler.toml's cron triggers, fired for the local edge as Cloudflare fires them (Miniflare runs a `scheduled`
 * handler only when asked): each minute, every cron the file names, and once when the edge starts; answers the
 * function that stops them.
 */
function runCrons(miniflare: Miniflare): () => void {
  const crons = WRANGLER.triggers?.crons ?? [];
  if (crons.length === 0) return () => {};
  const fire = () => {
    void miniflare
      .getWorker(EDGE_WORKER)
      .then((worker) => Promise.all(crons.map((cron) => worker.scheduled({ cron }))))
      .catch(() => {
        /* the edge is stopping */
      });
  };
  // Once at start too: a local edge that was stopped catches up at once rather than at the next minute.
  fire();
  const timer = setInterval(fire, CRON_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Starts workerd through Miniflare under the owner-only umask, so the registry and Durable Object files it creates
 * in a data folder are readable by this user alone. An in-memory edge (no registry file; its objects' folder in memory
 * is its own and owner-only from the start) leaves the umask alone (so
 * it also starts from a worker thread, where the umask cannot be set: mutation testing runs the tests there).
 */
export async function startMiniflare(
  options: ReturnType<typeof miniflareOptions>,
): Promise<{ miniflare: Miniflare; url: URL }> {
  startWorkerdWithV8Flags();
  // The registry persists only with a data folder; an objects' folder in memory alone is not one.
  const persistent = options.d1Persist !== false;
  const underUmask = persistent ? withOwnerOnlyUmask : <T>(start: () => Promise<T>) => start();
  return underUmask(async () => {
    const miniflare = new Miniflare(options);
    try {
      await miniflare.ready;
      return { miniflare, url: await miniflare.unsafeGetDirectURL(EDGE_WORKER) };
    } catch (error) {
      await miniflare.dispose().catch(() => {});
      throw error;
    }
  });
}

/** The V8 flags of `EDGE_V8_FLAGS` (or the default), checked by the rule `npm start` checks it by. */
export function edgeV8Flags(env: EnvironmentRecord = process.env): string[] {
  return readEnvironment(z.object(localEdgeVariables), { EDGE_V8_FLAGS: env.EDGE_V8_FLAGS }).EDGE_V8_FLAGS;
}

/** The program Miniflare starts in place of workerd to give it V8 flags. */
const WORKERD_WRAPPER = join(root, 'launcher', 'workerd-v8');

/**
 * workerd takes V8 flags only in its configuration, which Miniflare writes without them: through
 * `MINIFLARE_WORKERD_PATH`, Miniflare starts `launcher/workerd-v8` instead, which adds them
 * (`launcher/workerdV8Flags.mjs`) and becomes the real workerd. Set for the whole process (Miniflare reads these
 * variables from it when it starts workerd), and passed on to the processes it starts.
 */
function startWorkerdWithV8Flags(): void {
  const flags = edgeV8Flags();
  if (process.env.GATEWAY_WORKERD === undefined) {
    // A MINIFLARE_WORKERD_PATH naming the wrapper itself (inherited without GATEWAY_WORKERD) would make it start
    // itself for ever: the real workerd is then the one Miniflare brings.
    const given = process.env.MINIFLARE_WORKERD_PATH;
    const isWrapper = given !== undefined && existsSync(given) && realpathSync(given) === realpathSync(WORKERD_WRAPPER);
    process.env.GATEWAY_WORKERD =
      given !== undefined && !isWrapper
        ? given
        : (createRequire(createRequire(import.meta.url).resolve('miniflare'))('workerd') as { default: string })
            .default;
  }
  if (flags.length === 0) {
    process.env.MINIFLARE_WORKERD_PATH = process.env.GATEWAY_WORKERD;
    return;
  }
  process.env.GATEWAY_NODE = process.execPath;
  process.env.GATEWAY_V8_FLAGS = flags.join(' ');
  process.env.MINIFLARE_WORKERD_PATH = WORKERD_WRAPPER;
}
