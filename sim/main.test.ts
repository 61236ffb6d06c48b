/**
 * The simulator as a separate process, the way the launcher and the broker's end-to-end tests start it: the ready
 * line, the configured servers, a JSON config file, a clean exit on SIGTERM, and which peers it answers (loopback by
 * default; SIM_MANAGER_ALLOW's addresses for manager sessions, SIM_CONTROL_TOKEN's bearers for the fault controls),
 * a second host played by a client bound to another loopback address (127.0.0.2, which only 127.0.0.1's checks
 * would take for this host).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeServiceBundle } from '../launcher/bundles.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What the launcher runs (launcher/stack.ts): the simulator's kept bundle, or the entry through tsx without one. */
const simArgs = nodeServiceBundle('sim/main.ts').then((bundle) =>
  bundle !== undefined ? ['--enable-source-maps', bundle] : ['--import', 'tsx', 'sim/main.ts'],
);

async function startProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; ready: any; lines: string[] }> {
  const child = spawn(process.execPath, await simArgs, {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, SIM_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.on('data', (d) => {
      buffer += d;
      let at: number;
      while ((at = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        lines.push(line);
        if (lines.length === 1) resolve({ child, ready: JSON.parse(line), lines });
      }
    });
    child.once('exit', (code) => reject(new Error(`sim exited with ${code}: ${stderr}`)));
  });
}

/** An HTTP request to the simulator from `localAddress`: its status and JSON body. */
function fromAddress(
  localAddress: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method,
        path,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.once('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const LOGGED_IN = { server: 'demo-pf4', family: 'PF4' };
const managerLogin = async (port: number, localAddress: string, password: string) => {
  const client = await ManagerClient.connect(port, 'demo-pf4', { localAddress });
  try {
    return await client.ok<{ server: string; family: string }>('login', { login: 1000, password, pump: false });
  } finally {
    client.close();
  }
};

describe('sim/main.ts', () => {
  it('prints the ready line, serves the default servers and exits cleanly on SIGTERM', async () => {
    const { child, ready, lines } = await startProcess({ SIM_MANAGER_PASSWORD: 'proc-secret' });
    expect(ready).toEqual({ msg: 'sim listening', port: ready.port, servers: ['demo-pf4', 'demo-pf5'] });
    expect(ready.port).toBeGreaterThan(0);
    const client = await ManagerClient.connect(ready.port, 'demo-pf5');
    await client.ok('login', { login: 1000, password: 'proc-secret', pump: false });
    await client.fails('login', { login: 1000, password: 'proc-secret-wrong' });
    client.close();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const line of lines) {
      expect(() => JSON.parse(line)).not.toThrow();
      expect(line).not.toContain('proc-secret');
    }
  });

  it('serves the servers of a SIM_CONFIG file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-config-'));
    dirs.push(dir);
    const path = join(dir, 'sim.json');
    writeFileSync(
      path,
      JSON.stringify({
        servers: [
          { name: 'lab-pf4', family: 'PF4', accounts: 3, trades: 2, managers: [{ login: 7, password: 'lab' }] },
        ],
      }),
    );
    const { ready } = await startProcess({ SIM_CONFIG: path });
    expect(ready.servers).toEqual(['lab-pf4']);
    const client = await ManagerClient.connect(ready.port, 'lab-pf4');
    await client.ok('login', { login: 7, password: 'lab', pump: false });
    const page = await client.ok<{ items: unknown[] }>('UsersRequest', {});
    expect(page.items).toHaveLength(3);
    client.close();
  });

  it('answers loopback only by default: another address gets no manager session, no fault control and no health', async () => {
    const { ready } = await startProcess({ SIM_MANAGER_PASSWORD: 'peer-secret' });
    await expect(managerLogin(ready.port, '127.0.0.2', 'peer-secret')).rejects.toThrow('upgrade refused with 403');
    const refused = { status: 403, body: { error: 'address not allowed (loopback and SIM_MANAGER_ALLOW only)' } };
    expect(
      await fromAddress('127.0.0.2', ready.port, 'POST', '/control/demo-pf4/refuse-login', {}, { on: true }),
    ).toEqual(refused);
    expect(await fromAddress('127.0.0.2', ready.port, 'GET', '/healthz')).toEqual(refused);
    expect(await managerLogin(ready.port, '127.0.0.1', 'peer-secret')).toMatchObject(LOGGED_IN);
    expect((await fromAddress('127.0.0.1', ready.port, 'GET', '/control/demo-pf4/state')).body.faults).toMatchObject({
      refuseLogin: false,
    });
  });

  it("opens manager sessions to SIM_MANAGER_ALLOW's addresses, and keeps the fault controls to loopback", async () => {
    const { ready, lines } = await startProcess({
      SIM_MANAGER_PASSWORD: 'peer-secret',
      SIM_MANAGER_ALLOW: '127.0.0.2',
    });
    expect(await managerLogin(ready.port, '127.0.0.2', 'peer-secret')).toMatchObject(LOGGED_IN);
    await expect(managerLogin(ready.port, '127.0.0.3', 'peer-secret')).rejects.toThrow('upgrade refused with 403');
    expect(await fromAddress('127.0.0.2', ready.port, 'GET', '/healthz')).toEqual({
      status: 200,
      body: { status: 'ok', servers: ['demo-pf4', 'demo-pf5'] },
    });
    expect(
      await fromAddress('127.0.0.2', ready.port, 'POST', '/control/demo-pf4/refuse-login', {}, { on: true }),
    ).toEqual({
      status: 403,
      body: { error: 'the fault controls answer loopback only (SIM_CONTROL_TOKEN unset)' },
    });
    expect(await fromAddress('127.0.0.2', ready.port, 'GET', '/control/demo-pf4/state')).toMatchObject({ status: 403 });
    // The refused switch was not thrown: logins still pass, and loopback still has the controls.
    expect((await fromAddress('127.0.0.1', ready.port, 'GET', '/control/demo-pf4/state')).body.faults).toMatchObject({
      refuseLogin: false,
    });
    expect(await managerLogin(ready.port, '127.0.0.2', 'peer-secret')).toMatchObject(LOGGED_IN);
    expect(
      lines.some((l) => l.includes('manager connection refused: address not allowed') && l.includes('127.0.0.3')),
    ).toBe(true);
  });

  it('takes CIDR ranges, and gives an allowed peer the fault controls only with SIM_CONTROL_TOKEN as its bearer token', async () => {
    const controlToken = 'control-token-0123456789';
    const { ready, lines } = await startProcess({
      SIM_MANAGER_PASSWORD: 'peer-secret',
      SIM_MANAGER_ALLOW: '10.0.0.0/8, 127.0.0.2/31',
      SIM_CONTROL_TOKEN: controlToken,
    });
    expect(await managerLogin(ready.port, '127.0.0.3', 'peer-secret')).toMatchObject(LOGGED_IN);
    await expect(managerLogin(ready.port, '127.0.0.4', 'peer-secret')).rejects.toThrow('upgrade refused with 403');
    const needsToken = {
      status: 401,
      body: { error: 'the fault controls need Authorization: Bearer <SIM_CONTROL_TOKEN> from this address' },
    };
    expect(await fromAddress('127.0.0.2', ready.port, 'GET', '/control/demo-pf4/state')).toEqual(needsToken);
    expect(
      await fromAddress('127.0.0.2', ready.port, 'GET', '/control/demo-pf4/state', {
        authorization: `Bearer ${controlToken}x`,
      }),
    ).toEqual(needsToken);
    // A peer outside the list is refused whatever it presents.
    expect(
      await fromAddress('127.0.0.4', ready.port, 'GET', '/control/demo-pf4/state', {
        authorization: `Bearer ${controlToken}`,
      }),
    ).toMatchObject({ status: 403 });
    const thrown = await fromAddress(
      '127.0.0.2',
      ready.port,
      'POST',
      '/control/demo-pf4/refuse-login',
      { authorization: `Bearer ${controlToken}` },
      { on: true },
    );
    expect(thrown).toMatchObject({ status: 200, body: { ok: true, server: 'demo-pf4', action: 'refuse-login' } });
    await expect(managerLogin(ready.port, '127.0.0.2', 'peer-secret')).rejects.toThrow(/login failed/);
    for (const line of lines) expect(line).not.toContain(controlToken);
  });

  it('refuses to start with a SIM_MANAGER_ALLOW entry that is not an address, or a short SIM_CONTROL_TOKEN', async () => {
    await expect(startProcess({ SIM_MANAGER_ALLOW: '127.0.0.2, broker, 10.0.0.0/33' })).rejects.toThrow(
      'SIM_MANAGER_ALLOW must be IP addresses or CIDR ranges (10.0.0.5, 172.29.79.0/24, fd00::/8) separated by commas; not one: broker 10.0.0.0/33',
    );
    await expect(startProcess({ SIM_CONTROL_TOKEN: 'short' })).rejects.toThrow(
      'SIM_CONTROL_TOKEN must be at least 16 characters',
    );
  });

  it('refuses to start with an invalid config and names the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-config-'));
    dirs.push(dir);
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ servers: [{ name: 'x', family: 'PF6', managers: [] }] }));
    await expect(startProcess({ SIM_CONFIG: path })).rejects.toThrow(/servers\.0\.family/);
  });
});
