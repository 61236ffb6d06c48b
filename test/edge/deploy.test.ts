/**
 * The deploy path, offline: `wrangler deploy --dry-run` bundles the worker for staging and production with source
 * maps; each environment has the top level's bindings, vars and migrations, no loopback URL and no secret in its
 * vars; the local run (launcher/edge.ts, built from wrangler.toml) has the top level's bindings; a registry kept in a
 * data folder is migrated by wrangler's own command into wrangler's layout, so wrangler's D1 commands see the rows the
 * edge wrote; and the registry CLI's wrangler-backed database writes parameters as safe SQL literals; `wrangler dev`
 * serves the worker on that registry with the secrets of an env file (what `npm run secrets -- --local` writes).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { COMPATIBILITY_DATE, EDGE_WORKER, INSPECT_WORKER, LOCAL_D1_ID, migrationFiles, miniflareOptions, OBJECTS_WORKER, REGISTRY_WORKER, runWrangler, startEdge } from '../../launcher/edge.js';
import { executeArgs, inlineParameters, wranglerD1 } from '../../launcher/wranglerD1.js';
import { RegistryStore } from '../../workers/registry/registryStore.js';
import { createServer } from 'node:net';
import { newBrokerSecret, newSigningKey } from '../../shared/deploymentSecrets.js';
import { hashSecret } from '../../shared/secrets.js';

const root = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const tempDir = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const wrangler = runWrangler;

const ENVIRONMENTS = ['staging', 'production'] as const;
const read = (env?: string) => unstable_readConfig({ config: join(root, 'wrangler.toml'), env });
const loopback = (url: string) => ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(new URL(url).hostname) || new URL(url).hostname.startsWith('127.');

describe('wrangler deploy --dry-run', () => {
  // The environments' bundles are independent: built side by side.
  it.concurrent.for(ENVIRONMENTS)('bundles the %s worker with its source map', { timeout: 90_000 }, async (env, { expect }) => {
    const outdir = tempDir(`deploy-${env}-`);
    const { code, output } = await wrangler(['deploy', '--dry-run', '--outdir', outdir, '--env', env, '--config', join(root, 'wrangler.toml')]);
    expect(code, output).toBe(0);
    expect(output).toContain('--dry-run: exiting now.');
    expect(output).toContain(`env.DB (registry-${env})`);
    expect(readdirSync(outdir).sort()).toEqual(expect.arrayContaining(['index.js', 'index.js.map']));
  });
});

describe('wrangler.toml environments', () => {
  const local = read();

  it.each(ENVIRONMENTS)('%s: the top level\'s bindings, vars and migrations, public https URLs, no secrets in vars', (env) => {
    const config = read(env);
    expect(config.name).toBe(`${local.name}-${env}`);
    expect(config.upload_source_maps).toBe(true);
    expect(config.observability).toMatchObject({ enabled: true });
    // Environments inherit neither: a binding or var added at the top level must be added to [env.staging] and [env.production].
    expect(config.durable_objects.bindings, `[env.${env}] Durable Object bindings`).toStrictEqual(local.durable_objects.bindings);
    expect(config.migrations).toStrictEqual(local.migrations);
    expect(Object.keys(config.vars).sort(), `[env.${env}.vars]`).toStrictEqual(Object.keys(local.vars).sort());
    for (const name of ['BROKER_URL', 'PUBLIC_URL']) {
      const url = String(config.vars[name]);
      expect(new URL(url).protocol, `${env} ${name}`).toBe('https:');
      expect(loopback(url), `${env} ${name} ${url}`).toBe(false);
    }
    for (const secret of ['BROKER_SECRET', 'AUTH_SIGNING_KEY']) expect(Object.keys(config.vars)).not.toContain(secret);
    expect(config.d1_databases).toHaveLength(1);
    expect(config.d1_databases[0]).toMatchObject({ binding: 'DB', database_name: `registry-${env}`, migrations_dir: local.d1_databases[0].migrations_dir });
  });

  it('keeps loopback URLs at the top level only, and matches what npm start runs', () => {
    expect(loopback(String(local.vars.BROKER_URL))).toBe(true);
    expect(local.compatibility_date).toBe(COMPATIBILITY_DATE);
    expect(local.d1_databases[0].preview_database_id).toBe(LOCAL_D1_ID);
    const options = miniflareOptions('', {});
    // Locally the objects run in a worker of their own; both workers have the bindings wrangler.toml gives the one.
    expect(options.workers.map((w) => w.name)).toStrictEqual([EDGE_WORKER, OBJECTS_WORKER, INSPECT_WORKER, REGISTRY_WORKER]);
    // Node's handles: the inspect worker has the objects' bindings and nothing else, the registry worker the database.
    expect(Object.keys(options.workers[2]).sort()).toStrictEqual(['compatibilityDate', 'durableObjects', 'modules', 'name']);
    expect((options.workers[2] as { durableObjects: unknown }).durableObjects).toStrictEqual((options.workers[1] as { durableObjects: unknown }).durableObjects);
    expect(Object.keys(options.workers[3]).sort()).toStrictEqual(['compatibilityDate', 'd1Databases', 'modules', 'name']);
    for (const worker of options.workers.slice(0, 2).map((w) => w as Extract<typeof w, { durableObjects: unknown }>)) {
      expect(worker.d1Databases).toStrictEqual({ DB: LOCAL_D1_ID });
      const classes = Object.fromEntries(Object.entries(worker.durableObjects).map(([name, o]) => [name, o.className]));
      expect(Object.fromEntries(local.durable_objects.bindings.map((b: { name: string; class_name: string }) => [b.name, b.class_name]))).toStrictEqual(classes);
      for (const o of Object.values(worker.durableObjects)) {
        expect(o.scriptName).toBe(OBJECTS_WORKER);
        // The key the objects had in the single unnamed worker before: a data folder keeps its storage and object ids.
        expect(o.unsafeUniqueKey).toBe(`-${o.className}`);
      }
    }
    for (const [name, value] of Object.entries(local.vars)) expect(typeof value, name).toBe('string');
  });
});

/**
 * The registry as npm start leaves it, for the registry and `wrangler dev` tests: a data folder migrated by wrangler's
 * own command (startEdge runs it on a folder with migrations pending) and a client in it. Migrating is a wrangler run
 * of its own, so the file does it once, while the bundles are built; the tests that need the folder await it.
 */
const DEV_ORG = '0e000000-0000-4000-8000-00000000000e';
let registryReady: Promise<string>;
beforeAll(() => {
  registryReady = prepareRegistry();
  registryReady.catch(() => { /* the tests awaiting it fail with the error */ });
});
// Settled before the folders go (hooks after all run last-registered first), even when no test awaited it.
afterAll(() => registryReady?.then(() => undefined, () => undefined));

async function prepareRegistry(): Promise<string> {
  const dataDir = tempDir('deploy-registry-');
  const edge = await startEdge({ dataDir });
  try {
    const db = await edge.db();
    const now = new Date().toISOString();
    const hashed = await hashSecret('dev-client-secret');
    await db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(DEV_ORG, 'Dev', now).run();
    await db.prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).bind('dev-client', DEV_ORG, 'dev', hashed.hash, hashed.salt, hashed.iterations, 'webapi', now).run();
  } finally {
    await edge.close();
  }
  return dataDir;
}

describe('the local registry is wrangler\'s', () => {
  it('is migrated by wrangler\'s own command, and wrangler\'s D1 commands read what the edge wrote', async () => {
    const dataDir = await registryReady;
    const edge = await startEdge({ dataDir });
    try {
      const db = await edge.db();
      const applied = (await db.prepare('SELECT name FROM d1_migrations ORDER BY id').all<{ name: string }>()).results.map((r) => r.name);
      expect(applied).toStrictEqual(migrationFiles());
      expect(existsSync(join(dataDir, 'v3', 'd1'))).toBe(true);
      const listed = await wrangler(['d1', 'migrations', 'list', 'DB', '--local', '--persist-to', dataDir, '--config', join(root, 'wrangler.toml')]);
      expect(listed.code, listed.output).toBe(0);
      expect(listed.output).toContain('No migrations to apply');

      // Written by the edge, read through wrangler; written through wrangler, read by the edge.
      const store = new RegistryStore(wranglerD1({ remote: false, persistTo: dataDir }));
      const tricky = `O'Hara "quoted" ? ; -- not a comment`;
      await db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
        .bind('0d000000-0000-4000-8000-00000000000d', 'From the edge', new Date().toISOString()).run();
      const added = await store.addOrganization({ name: tricky });
      expect((await store.allOrganizations()).map((o) => o.name).sort()).toStrictEqual(['Dev', 'From the edge', tricky].sort());
      const row = await db.prepare('SELECT name FROM organizations WHERE id = ?').bind(added.id).first<{ name: string }>();
      expect(row?.name).toBe(tricky);
    } finally {
      await edge.close();
    }
  }, 240_000); // four wrangler runs of several seconds each on a loaded machine

  it('moves a registry from the layout before wrangler\'s into it once', () => {
    const dataDir = tempDir('deploy-layout-');
    mkdirSync(join(dataDir, 'd1', 'miniflare-D1DatabaseObject'), { recursive: true });
    writeFileSync(join(dataDir, 'd1', 'miniflare-D1DatabaseObject', 'registry.sqlite'), 'old');
    const options = miniflareOptions('', { dataDir });
    expect(options.d1Persist).toBe(join(dataDir, 'v3', 'd1'));
    expect(existsSync(join(dataDir, 'v3', 'd1', 'miniflare-D1DatabaseObject', 'registry.sqlite'))).toBe(true);
    expect(existsSync(join(dataDir, 'd1'))).toBe(false);
  });
});

describe('wrangler dev', () => {
  it('serves the worker on the registry and with the secrets npm start uses', async () => {
    // The registry as npm start leaves it: migrated by wrangler, a client in it (the file's).
    const dataDir = await registryReady;
    const envFile = join(dataDir, 'dev.vars');
    const signingKey = await newSigningKey();
    writeFileSync(envFile, `BROKER_SECRET='${newBrokerSecret()}'\nAUTH_SIGNING_KEY='${signingKey}'\n`, { mode: 0o600 });

    const port = await new Promise<number>((done) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => { const { port: p } = server.address() as { port: number }; server.close(() => done(p)); });
    });
    const dev = spawn(process.execPath, [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'dev', '--config', join(root, 'wrangler.toml'),
      '--env-file', envFile, '--persist-to', dataDir, '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0'], {
      cwd: root, env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let output = '';
    dev.stdout!.on('data', (d) => { output += d; });
    dev.stderr!.on('data', (d) => { output += d; });
    try {
      const base = `http://127.0.0.1:${port}`;
      let live = false;
      for (let i = 0; i < 600 && !live && dev.exitCode === null; i++) {
        live = await fetch(`${base}/livez`).then((r) => r.ok, () => false);
        if (!live) await new Promise((r) => setTimeout(r, 100));
      }
      expect(live, output).toBe(true);
      const token = await fetch(`${base}/connect/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa('dev-client:dev-client-secret')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&scope=webapi',
      });
      expect(token.status, output).toBe(200);
      const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
      expect(jwks.keys.map((k) => k.kid)).toContain(JSON.parse(signingKey).kid);
      // The access log writes its lines in batches (ACCESS_LOG_BATCH): wait for wrangler to relay one, bounded.
      await vi.waitFor(() => expect(output).toContain('"msg":"request"'), { timeout: 10_000, interval: 50 });
    } finally {
      // wrangler and the workerd it started: the process group this test created.
      try { process.kill(-dev.pid!, 'SIGTERM'); } catch { /* already gone */ }
      await new Promise((r) => (dev.exitCode === null ? dev.once('close', r) : r(null)));
    }
  }, 180_000);
});

describe('the registry CLI on the deployed database', () => {
  it('runs wrangler d1 execute --remote in the chosen environment', () => {
    const args = executeArgs({ remote: true, env: 'staging' }, 'SELECT 1');
    expect(args.slice(0, 6)).toStrictEqual(['d1', 'execute', 'DB', '--json', '--command', 'SELECT 1']);
    expect(args.slice(6, 9)).toStrictEqual(['--remote', '--env', 'staging']);
    expect(args).not.toContain('--local');
  });

  it('writes parameters as SQLite literals, quotes doubled, placeholders inside literals left alone', () => {
    expect(inlineParameters('INSERT INTO t VALUES (?, ?, ?, ?, \'?\')', ["it's", 3, null, true]))
      .toBe("INSERT INTO t VALUES ('it''s', 3, NULL, 1, '?')");
    expect(() => inlineParameters('SELECT ?', [])).toThrow(/too few/);
    expect(() => inlineParameters('SELECT ?', [1, 2])).toThrow(/2 parameters for 1/);
    expect(() => inlineParameters('SELECT ?', [Number.NaN])).toThrow();
  });
});
