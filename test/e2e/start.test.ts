/**
 * `npm start` as a user runs it: polled from the first second, the edge answers RegistryNotReady until the registry
 * is migrated and seeded and serves from then on; the launcher prints the demo credentials, the stack answers with
 * them, and SIGINT (Ctrl-C) stops every process it started.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './support.js';
import { REGISTRY_MIGRATIONS } from '../../workers/registry/migrationNames.js';

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let launcher: ChildProcess | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'gateway-start-'));
afterAll(() => {
  if (launcher && launcher.exitCode === null) launcher.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('brings the stack up, prints a working demo client, and stops everything on SIGINT', async () => {
    const [port, brokerPort, simPort] = [await freePort(), await freePort(), await freePort()];
    launcher = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      // The default log level, as a newcomer starts it.
      env: {
        ...process.env,
        PORT: String(port),
        BROKER_PORT: String(brokerPort),
        SIM_PORT: String(simPort),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    launcher.stdout!.on('data', (d) => {
      output += d;
    });
    launcher.stderr!.on('data', (d) => {
      output += d;
    });
    const bannerShown = () => output.includes('Ctrl-C stops everything');
    // Polled from the first second, as a script waiting for the stack would: the edge is not answered (its socket not
    // open yet), or refuses with RegistryNotReady while the registry is migrated and the demo is seeded, or
    // serves. Never an internal error, never a token refused for an unknown client, never back to not ready.
    const seen: Array<{ path: string; status: number; retryAfter: string | null; code: unknown }> = [];
    const polling = (async () => {
      while (!bannerShown() && launcher.exitCode === null) {
        for (const request of [
          () => fetch(`http://127.0.0.1:${port}/healthz`),
          () =>
            fetch(`http://127.0.0.1:${port}/connect/token`, {
              method: 'POST',
              headers: {
                authorization: `Basic ${Buffer.from('demo:demo-secret').toString('base64')}`,
                'content-type': 'application/x-www-form-urlencoded',
              },
              body: 'grant_type=client_credentials&scope=webapi',
            }),
        ]) {
          const res = await request().catch(() => null);
          if (!res) continue;
          const body = (await res.json().catch(() => ({}))) as { errorCode?: unknown; error?: unknown };
          seen.push({
            path: new URL(res.url).pathname,
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            code: body.errorCode ?? body.error,
          });
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // A first start on a fresh data folder migrates the registry before the demo is seeded.
    const up = await eventually(() => Promise.resolve(bannerShown()), 120_000, 100);
    await polling;
    expect(up, output).toBe(true);
    const notReady = (a: (typeof seen)[number]) =>
      a.status === 503 && a.code === 'RegistryNotReady' && a.retryAfter === '1';
    expect(
      seen.filter((a) => a.path === '/connect/token' && !notReady(a) && a.status !== 200),
      JSON.stringify(seen),
    ).toStrictEqual([]);
    const firstServed = seen.findIndex((a) => !notReady(a));
    if (firstServed >= 0) expect(seen.slice(firstServed).filter(notReady), JSON.stringify(seen)).toStrictEqual([]);
    expect(
      seen.filter((a) => a.status === 500),
      JSON.stringify(seen),
    ).toStrictEqual([]);
    expect(output).toContain(`http://127.0.0.1:${port}`);
    expect(output).toContain('demo-secret');
    // Quiet until the banner, polled or not: the registry's progress, never a warning while it migrates.
    const beforeBanner = output
      .slice(0, output.indexOf('Trade platform gateway is up.'))
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(beforeBanner, output).toStrictEqual([
      `stack: migrating the registry: ${REGISTRY_MIGRATIONS.length} migrations to apply`,
      `stack: registry migrated: ${REGISTRY_MIGRATIONS.join(', ')}`,
    ]);

    const base = `http://127.0.0.1:${port}`;
    const healthy = await eventually(async () => (await fetch(`${base}/healthz`)).status === 200, 30_000, 200);
    expect(healthy).toBe(true);
    const tokenRes = await fetch(`${base}/connect/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('demo:demo-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=webapi',
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const pf4 = output.match(/demo PF4\s+([0-9a-f-]{36})/)![1];
    const users = await fetch(`${base}/api/v2/PF4/${pf4}/UsersRequest?limit=3`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    const body = (await users.json()) as { data: Array<{ login: number }>; error: null };
    expect(body.error).toBeNull();
    expect(body.data).toHaveLength(3);

    const pids = [...output.matchAll(/; pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    launcher.kill('SIGINT');
    const exited = await eventually(() => Promise.resolve(launcher!.exitCode !== null), 20_000, 100);
    expect(exited).toBe(true);
    // 130 is the conventional status of a process ended by Ctrl-C.
    expect([0, 130]).toContain(launcher.exitCode);
    for (const port of [brokerPort, simPort]) {
      const refused = await eventually(
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            () => false,
            () => true,
          ),
        10_000,
        100,
      );
      expect(refused, `port ${port} still answers`).toBe(true);
    }
    await expect(fetch(`${base}/livez`)).rejects.toThrow();
    for (const pid of pids) expect(await eventually(() => Promise.resolve(!alive(pid)), 10_000, 100)).toBe(true);
  }, 180_000);
});
