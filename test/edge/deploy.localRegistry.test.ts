/**
 * The local registry is wrangler's: a registry kept in a data folder is migrated into wrangler's layout and recorded
 * in wrangler's own table, so wrangler finds no migration to apply, wrangler's D1 commands see the rows the edge
 * wrote, and the edge the rows the registry CLI's wrangler-backed database wrote; `wrangler dev` serves the worker on
 * that registry with the secrets of an env file (what `npm run secrets -- --local` writes). The offline deploy checks
 * are in deploy.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrationFiles, runWrangler, startEdge } from '../../launcher/edge.js';
import { wranglerD1 } from '../../launcher/wranglerD1.js';
import { RegistryStore } from '../../workers/registry/registryStore.js';
import { newBrokerSecret, newSigningKey } from '../../shared/deploymentSecrets.js';
import { hashSecret } from '../../shared/secrets.js';

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

/**
 * The registry as npm start leaves it, for the registry and `wrangler dev` tests: a data folder startEdge migrated and
 * a client in it, prepared once before the file's tests; the tests that need the folder await it.
 */
const DEV_ORG = '0e000000-0000-4000-8000-00000000000e';
let registryReady: Promise<string>;
beforeAll(() => {
  registryReady = prepareRegistry();
  registryReady.catch(() => {
    /* the tests awaiting it fail with the error */
  });
});
// Settled before the folders go (hooks after all run last-registered first), even when no test awaited it.
afterAll(() =>
  registryReady?.then(
    () => undefined,
    () => undefined,
  ),
);

async function prepareRegistry(): Promise<string> {
  const dataDir = tempDir('deploy-registry-');
  const edge = await startEdge({ dataDir });
  try {
    const db = await edge.db();
    const now = new Date().toISOString();
    const hashed = await hashSecret('dev-client-secret');
    await db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(DEV_ORG, 'Dev', now).run();
    await db
      .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind('dev-client', DEV_ORG, 'dev', hashed.hash, hashed.salt, hashed.iterations, 'webapi', now)
      .run();
  } finally {
    await edge.close();
  }
  return dataDir;
}

describe("the local registry is wrangler's", () => {
  it('is migrated as wrangler would: wrangler finds no migration to apply, and its D1 commands read what the edge wrote', async () => {
    const dataDir = await registryReady;
    const edge = await startEdge({ dataDir });
    try {
      const db = await edge.db();
      const applied = (
        await db.prepare('SELECT name FROM d1_migrations ORDER BY id').all<{ name: string }>()
      ).results.map((r) => r.name);
      expect(applied).toStrictEqual(migrationFiles());
      expect(existsSync(join(dataDir, 'v3', 'd1'))).toBe(true);
      const listed = await wrangler([
        'd1',
        'migrations',
        'list',
        'DB',
        '--local',
        '--persist-to',
        dataDir,
        '--config',
        join(root, 'wrangler.toml'),
      ]);
      expect(listed.code, listed.output).toBe(0);
      expect(listed.output).toContain('No migrations to apply');

      // Written by the edge, read through wrangler; written through wrangler, read by the edge.
      const store = new RegistryStore(wranglerD1({ remote: false, persistTo: dataDir }));
      const tricky = `O'Hara "quoted" ? ; -- not a comment`;
      await db
        .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
        .bind('0d000000-0000-4000-8000-00000000000d', 'From the edge', new Date().toISOString())
        .run();
      const added = await store.addOrganization({ name: tricky });
      expect((await store.allOrganizations()).map((o) => o.name).sort()).toStrictEqual(
        ['Dev', 'From the edge', tricky].sort(),
      );
      const row = await db
        .prepare('SELECT name FROM organizations WHERE id = ?')
        .bind(added.id)
        .first<{ name: string }>();
      expect(row?.name).toBe(tricky);
    } finally {
      await edge.close();
    }
  }, 240_000); // three wrangler runs of several seconds each on a loaded machine
});

describe('wrangler dev', () => {
  it('serves the worker on the registry and with the secrets npm start uses', async () => {
    // The registry as npm start leaves it: migrated, a client in it (the file's).
    const dataDir = await registryReady;
    const envFile = join(dataDir, 'dev.vars');
    const signingKey = await newSigningKey();
    writeFileSync(envFile, `BROKER_SECRET='${newBrokerSecret()}'\nAUTH_SIGNING_KEY='${signingKey}'\n`, { mode: 0o600 });

    const port = await new Promise<number>((done) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => done(p));
      });
    });
    const dev = spawn(
      process.execPath,
      [
        join(root, 'node_modules/wrangler/bin/wrangler.js'),
        'dev',
        '--config',
        join(root, 'wrangler.toml'),
        '--env-file',
        envFile,
        '--persist-to',
        dataDir,
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--inspector-port',
        '0',
      ],
      {
        cwd: root,
        env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let output = '';
    dev.stdout.on('data', (d) => {
      output += d;
    });
    dev.stderr.on('data', (d) => {
      output += d;
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      let live = false;
      for (let i = 0; i < 600 && !live && dev.exitCode === null; i++) {
        live = await fetch(`${base}/livez`).then(
          (r) => r.ok,
          () => false,
        );
        if (!live) await new Promise((r) => setTimeout(r, 100));
      }
      expect(live, output).toBe(true);
      const token = await fetch(`${base}/connect/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${btoa('dev-client:dev-client-secret')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=webapi',
      });
      expect(token.status, output).toBe(200);
      const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
      expect(jwks.keys.map((k) => k.kid)).toContain(JSON.parse(signingKey).kid);
      // The access log writes its lines in batches (ACCESS_LOG_BATCH): wait for wrangler to relay one, bounded.
      await vi.waitFor(() => expect(output).toContain('"msg":"request"'), { timeout: 10_000, interval: 50 });
    } finally {
      // wrangler and the workerd it started: the process group this test created.
      try {
        process.kill(-dev.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await new Promise((r) => (dev.exitCode === null ? dev.once('close', r) : r(null)));
    }
  }, 180_000);
});
