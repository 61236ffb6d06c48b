/**
 * The registry CLI end to end: real `tsx scripts/registry.ts` processes on a temporary DATA_DIR, then an edge started
 * on that same folder accepts the client the CLI printed, and the stored rows hold no clear secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestEdge } from '../support/edge.js';

const root = resolve(import.meta.dirname, '../..');
const MANAGER_PASSWORD = 'manager-pw-from-env';
let dataDir: string;

beforeAll(() => { dataDir = mkdtempSync(join(tmpdir(), 'registry-cli-')); });
afterAll(() => { if (dataDir) rmSync(dataDir, { recursive: true, force: true }); });

function registry(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/registry.ts'), ...args], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, ACME_MANAGER_PASSWORD: MANAGER_PASSWORD, BROKER_PLATFORMS_FILE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.once('error', fail);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

/** Runs the tasks with at most `width` at once, answering their results in task order. */
async function inTurns<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane));
  return results;
}
const brokerFile = () => join(dataDir, 'broker-platforms.json');

describe('registry CLI', () => {
  it('prints help and refuses bad usage with exit code 2 naming the flag', { timeout: 120_000 }, async () => {
    const help = await registry('help');
    expect(help.code).toBe(0);
    for (const command of ['org add', 'platform add', 'client add', 'platform remove', '--manager-password-env']) expect(help.stdout).toContain(command);

    const cases: Array<[string[], RegExp]> = [
      [['org', 'add'], /--name is required/],
      [['org', 'add', '--name', 'X', '--id', 'nope'], /--id must be a uuid/],
      [['platform', 'add', '--org', 'nope', '--type', 'PF4', '--name', 'X'], /--org must be a uuid/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF6', '--name', 'X'], /--type must be one of PF4, PF5, PFOther/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X', '--server', 'ws://127.0.0.1:1/x'], /go together/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X', '--server', 'http://x', '--manager-login', '1', '--manager-password-env', 'ACME_MANAGER_PASSWORD'], /--server must be a ws or wss URL/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X', '--server', 'ws://x', '--manager-login', 'one', '--manager-password-env', 'ACME_MANAGER_PASSWORD'], /--manager-login must be a positive integer/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X', '--server', 'ws://x', '--manager-login', '1', '--manager-password-env', 'NOT_SET_ANYWHERE'], /NOT_SET_ANYWHERE is not set/],
      [['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X', '--manager-password', 'secret'], /Unknown option '--manager-password'/],
      [['client', 'add', '--org', randomUUID(), '--id', 'has:colon'], /--id: client id must be/],
      [['org', 'remove'], /expected exactly one organization id/],
      [['nonsense'], /unknown command: nonsense/],
    ];
    // Two processes at a time: each is a Node start, and the machine running the suite may have two cores.
    const results = await inTurns(cases.map(([args]) => () => registry(...args)), 2);
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i];
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
    }
  });

  it('administers the registry that an edge on the same DATA_DIR serves', async () => {
    const org = json<{ id: string; name: string }>(await registry('org', 'add', '--name', 'Acme Broker', '--json'));
    expect(org.name).toBe('Acme Broker');

    const live = await registry('platform', 'add', '--org', org.id, '--type', 'PF4', '--name', 'Acme Live',
      '--server', 'ws://127.0.0.1:8791/demo-pf4', '--manager-login', '1000', '--manager-password-env', 'ACME_MANAGER_PASSWORD');
    expect(live.code).toBe(0);
    expect(live.stdout).toMatch(/platform [0-9a-f-]{36} added: PF4 "Acme Live"/);
    expect(live.stdout).toContain(brokerFile());
    expect(live.stdout + live.stderr).not.toContain(MANAGER_PASSWORD);
    const liveId = /platform ([0-9a-f-]{36}) added/.exec(live.stdout)![1];
    expect(JSON.parse(readFileSync(brokerFile(), 'utf8'))).toEqual({
      platforms: [{ id: liveId, family: 'PF4', server: 'ws://127.0.0.1:8791/demo-pf4', login: 1000, password: MANAGER_PASSWORD }],
    });

    const demoId = randomUUID();
    const demo = await registry('platform', 'add', '--org', org.id, '--type', 'PF5', '--name', 'Acme Demo', '--id', demoId.toUpperCase());
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain(`platform ${demoId} added`);
    expect(demo.stdout).toMatch(/note: the broker serves this platform only once its platform file/);
    expect((await registry('platform', 'add', '--org', org.id, '--type', 'PF5', '--name', 'Dup', '--id', demoId)).stderr).toContain('already exists');

    const added = await registry('client', 'add', '--org', org.id, '--name', 'Acme back office');
    expect(added.code).toBe(0);
    const clientId = /client_id\s+(\S+)/.exec(added.stdout)![1];
    const secret = /client_secret\s+(\S+)/.exec(added.stdout)![1];
    expect(added.stdout).toMatch(/shown only this once/);

    const platforms = json<Array<{ id: string; type: string; inBrokerFile: boolean }>>(await registry('platform', 'list', '--org', org.id, '--json'));
    expect(platforms.map((p) => [p.id, p.type, p.inBrokerFile])).toEqual([[liveId, 'PF4', true], [demoId, 'PF5', false]]);
    const clientList = await registry('client', 'list');
    expect(clientList.stdout).toContain(clientId);
    expect(clientList.stdout).not.toContain(secret);
    expect(clientList.stdout).not.toMatch(/hash|salt/i);
    expect((await registry('org', 'list')).stdout).toMatch(new RegExp(`${org.id}\\s+Acme Broker`));

    const busy = await registry('org', 'remove', org.id);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('still has 2 platform(s) and 1 client(s)');

    // The edge npm start would run on this DATA_DIR accepts the printed secret.
    const edge = await startTestEdge({ dataDir: join(dataDir, 'edge'), seed: false });
    try {
      const res = await fetch(new URL('/connect/token', edge.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${clientId}:${secret}`)}` },
        body: 'grant_type=client_credentials&scope=webapi',
      });
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      const listed = await fetch(new URL('/api/TradePlatforms', edge.url), { headers: { authorization: `Bearer ${access_token}` } });
      expect(((await listed.json()) as Array<{ id: string; name: string }>).map((p) => p.name)).toEqual(['Acme Live', 'Acme Demo']);

      const db = await edge.db();
      const rows = (await db.prepare('SELECT * FROM api_clients').all<Record<string, unknown>>()).results;
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ client_id: clientId, organization_id: org.id, iterations: 100_000, disabled: 0 });
      for (const value of Object.values(rows[0])) expect(String(value)).not.toContain(secret);
    } finally {
      await edge.close();
    }

    const disabled = await registry('client', 'disable', clientId);
    expect(disabled.stdout).toContain(`client ${clientId} disabled`);

    const removed = await registry('platform', 'remove', liveId);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`platform ${liveId} removed (and from ${brokerFile()})`);
    expect(JSON.parse(readFileSync(brokerFile(), 'utf8'))).toEqual({ platforms: [] });
    expect((await registry('platform', 'remove', liveId)).code).toBe(1);
    expect((await registry('platform', 'remove', demoId)).code).toBe(0);
    expect((await registry('client', 'remove', clientId)).code).toBe(0);
    expect((await registry('org', 'remove', org.id)).stdout).toContain(`organization ${org.id} removed`);
    expect(json<unknown[]>(await registry('org', 'list', '--json'))).toEqual([]);
    expect(existsSync(join(dataDir, 'edge', 'v3', 'd1'))).toBe(true);
    // Its first command migrates the fresh registry with wrangler's own command, several seconds on its own.
  }, 240_000);

  it('registers a client with the scopes it may hold, changes them, and the edge grants exactly those', async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Scoped Org', '--json'));
    const reader = json<{ clientId: string; clientSecret: string; scopes: string[] }>(await registry('client', 'add', '--org', org.id, '--json'));
    expect(reader.scopes).toEqual(['webapi']);
    const writer = json<{ clientId: string; clientSecret: string; scopes: string[] }>(
      await registry('client', 'add', '--org', org.id, '--scopes', 'webapi.write', '--json'));
    expect(writer.scopes).toEqual(['webapi', 'webapi.write']);
    const bad = await registry('client', 'add', '--org', org.id, '--scopes', 'webapi,root');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--scopes: unknown scope root: the scopes are webapi, webapi.write, webapi.admin');

    const changed = await registry('client', 'scopes', reader.clientId, 'webapi.admin,webapi.write');
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain(`client ${reader.clientId} may hold webapi webapi.write webapi.admin`);
    expect((await registry('client', 'scopes', reader.clientId)).code).toBe(2);
    expect((await registry('client', 'scopes', 'nobody', 'webapi')).code).toBe(1);
    expect((await registry('client', 'list', '--org', org.id)).stdout).toMatch(new RegExp(`${writer.clientId}.*enabled\\s+webapi webapi.write\\s`));

    const edge = await startTestEdge({ dataDir: join(dataDir, 'edge'), seed: false });
    try {
      const grant = async (c: { clientId: string; clientSecret: string }) => {
        const res = await fetch(new URL('/connect/token', edge.url), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${c.clientId}:${c.clientSecret}`)}` },
          body: 'grant_type=client_credentials&scope=webapi',
        });
        return ((await res.json()) as { scope: string }).scope;
      };
      expect(await grant(reader)).toBe('webapi webapi.write webapi.admin');
      expect(await grant(writer)).toBe('webapi webapi.write');
    } finally {
      await edge.close();
    }
  }, 120_000);
});
