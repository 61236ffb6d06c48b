/**
 * The deploy path, offline: `wrangler deploy --dry-run` bundles the worker for staging and production with source
 * maps; each environment has the top level's bindings, vars and migrations, no loopback URL and no secret in its
 * vars; the local run (launcher/edge.ts, built from wrangler.toml) has the top level's bindings and moves a registry
 * folder of the layout before wrangler's into it; and the registry CLI's wrangler-backed database writes parameters
 * as safe SQL literals. The local registry under wrangler's own commands, and `wrangler dev`, are in
 * deploy.localRegistry.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import {
  COMPATIBILITY_DATE,
  EDGE_WORKER,
  INSPECT_WORKER,
  LOCAL_D1_ID,
  miniflareOptions,
  OBJECTS_WORKER,
  REGISTRY_WORKER,
  runWrangler,
} from '../../launcher/edge.js';
import { executeArgs, inlineParameters } from '../../launcher/wranglerD1.js';

const root = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const wrangler = runWrangler;

const ENVIRONMENTS = ['staging', 'production'] as const;
const read = (env?: string) => unstable_readConfig({ config: join(root, 'wrangler.toml'), env });
const loopback = (url: string) =>
  ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(new URL(url).hostname) ||
  new URL(url).hostname.startsWith('127.');

describe('wrangler deploy --dry-run', () => {
  // The environments' bundles are independent: built side by side.
  it.concurrent.for(ENVIRONMENTS)(
    'bundles the %s worker with its source map',
    { timeout: 90_000 },
    async (env, { expect }) => {
      const outdir = tempDir(`deploy-${env}-`);
      const { code, output } = await wrangler([
        'deploy',
        '--dry-run',
        '--outdir',
        outdir,
        '--env',
        env,
        '--config',
        join(root, 'wrangler.toml'),
      ]);
      expect(code, output).toBe(0);
      expect(output).toContain('--dry-run: exiting now.');
      expect(output).toContain(`env.DB (registry-${env})`);
      expect(readdirSync(outdir).sort()).toEqual(expect.arrayContaining(['index.js', 'index.js.map']));
    },
  );
});

describe('wrangler.toml environments', () => {
  const local = read();

  it.each(ENVIRONMENTS)(
    "%s: the top level's bindings, vars and migrations, public https URLs, no secrets in vars",
    (env) => {
      const config = read(env);
      expect(config.name).toBe(`${local.name}-${env}`);
      expect(config.upload_source_maps).toBe(true);
      expect(config.observability).toMatchObject({ enabled: true });
      // Environments inherit neither: a binding or var added at the top level must be added to [env.staging] and [env.production].
      expect(config.durable_objects.bindings, `[env.${env}] Durable Object bindings`).toStrictEqual(
        local.durable_objects.bindings,
      );
      expect(config.migrations).toStrictEqual(local.migrations);
      expect(Object.keys(config.vars).sort(), `[env.${env}.vars]`).toStrictEqual(Object.keys(local.vars).sort());
      for (const name of ['BROKER_URL', 'PUBLIC_URL']) {
        const url = String(config.vars[name]);
        expect(new URL(url).protocol, `${env} ${name}`).toBe('https:');
        expect(loopback(url), `${env} ${name} ${url}`).toBe(false);
      }
      for (const secret of ['BROKER_SECRET', 'AUTH_SIGNING_KEY'])
        expect(Object.keys(config.vars)).not.toContain(secret);
      expect(config.d1_databases).toHaveLength(1);
      expect(config.d1_databases[0]).toMatchObject({
        binding: 'DB',
        database_name: `registry-${env}`,
        migrations_dir: local.d1_databases[0].migrations_dir,
      });
    },
  );

  it('keeps loopback URLs at the top level only, and matches what npm start runs', () => {
    expect(loopback(String(local.vars.BROKER_URL))).toBe(true);
    expect(local.compatibility_date).toBe(COMPATIBILITY_DATE);
    expect(local.d1_databases[0].preview_database_id).toBe(LOCAL_D1_ID);
    const options = miniflareOptions('', {});
    // Locally the objects run in a worker of their own; both workers have the bindings wrangler.toml gives the one.
    expect(options.workers.map((w) => w.name)).toStrictEqual([
      EDGE_WORKER,
      OBJECTS_WORKER,
      INSPECT_WORKER,
      REGISTRY_WORKER,
    ]);
    // Node's handles: the inspect worker has the objects' bindings and nothing else, the registry worker the database.
    expect(Object.keys(options.workers[2]).sort()).toStrictEqual([
      'compatibilityDate',
      'durableObjects',
      'modules',
      'name',
    ]);
    expect((options.workers[2] as { durableObjects: unknown }).durableObjects).toStrictEqual(
      (options.workers[1] as { durableObjects: unknown }).durableObjects,
    );
    expect(Object.keys(options.workers[3]).sort()).toStrictEqual([
      'compatibilityDate',
      'd1Databases',
      'modules',
      'name',
    ]);
    for (const worker of options.workers.slice(0, 2).map((w) => w as Extract<typeof w, { durableObjects: unknown }>)) {
      expect(worker.d1Databases).toStrictEqual({ DB: LOCAL_D1_ID });
      const classes = Object.fromEntries(Object.entries(worker.durableObjects).map(([name, o]) => [name, o.className]));
      expect(
        Object.fromEntries(
          local.durable_objects.bindings.map((b: { name: string; class_name: string }) => [b.name, b.class_name]),
        ),
      ).toStrictEqual(classes);
      for (const o of Object.values(worker.durableObjects)) {
        expect(o.scriptName).toBe(OBJECTS_WORKER);
        // The key the objects had in the single unnamed worker before: a data folder keeps its storage and object ids.
        expect(o.unsafeUniqueKey).toBe(`-${o.className}`);
      }
    }
    for (const [name, value] of Object.entries(local.vars)) expect(typeof value, name).toBe('string');
  });
});

describe("the local registry is wrangler's", () => {
  it("moves a registry from the layout before wrangler's into it once", () => {
    const dataDir = tempDir('deploy-layout-');
    mkdirSync(join(dataDir, 'd1', 'miniflare-D1DatabaseObject'), { recursive: true });
    writeFileSync(join(dataDir, 'd1', 'miniflare-D1DatabaseObject', 'registry.sqlite'), 'old');
    const options = miniflareOptions('', { dataDir });
    expect(options.d1Persist).toBe(join(dataDir, 'v3', 'd1'));
    expect(existsSync(join(dataDir, 'v3', 'd1', 'miniflare-D1DatabaseObject', 'registry.sqlite'))).toBe(true);
    expect(existsSync(join(dataDir, 'd1'))).toBe(false);
  });
});

describe('the registry CLI on the deployed database', () => {
  it('runs wrangler d1 execute --remote in the chosen environment', () => {
    const args = executeArgs({ remote: true, env: 'staging' }, 'SELECT 1');
    expect(args.slice(0, 6)).toStrictEqual(['d1', 'execute', 'DB', '--json', '--command', 'SELECT 1']);
    expect(args.slice(6, 9)).toStrictEqual(['--remote', '--env', 'staging']);
    expect(args).not.toContain('--local');
  });

  it('writes parameters as SQLite literals, quotes doubled, placeholders inside literals left alone', () => {
    expect(inlineParameters("INSERT INTO t VALUES (?, ?, ?, ?, '?')", ["it's", 3, null, true])).toBe(
      "INSERT INTO t VALUES ('it''s', 3, NULL, 1, '?')",
    );
    expect(() => inlineParameters('SELECT ?', [])).toThrow(/too few/);
    expect(() => inlineParameters('SELECT ?', [1, 2])).toThrow(/2 parameters for 1/);
    expect(() => inlineParameters('SELECT ?', [Number.NaN])).toThrow();
  });
});
