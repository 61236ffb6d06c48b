/**
 * The simulator as a separate process, the way the launcher and the broker's end-to-end tests start it: the ready
 * line, the configured servers, a JSON config file, and a clean exit on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagerClient } from './testing/managerClient.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function startProcess(env: Record<string, string>): Promise<{ child: ChildProcess; ready: any; lines: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sim/main.ts'], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, SIM_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += d; });
    child.stdout!.on('data', (d) => {
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
    writeFileSync(path, JSON.stringify({
      servers: [{ name: 'lab-pf4', family: 'PF4', accounts: 3, trades: 2, managers: [{ login: 7, password: 'lab' }] }],
    }));
    const { ready } = await startProcess({ SIM_CONFIG: path });
    expect(ready.servers).toEqual(['lab-pf4']);
    const client = await ManagerClient.connect(ready.port, 'lab-pf4');
    await client.ok('login', { login: 7, password: 'lab', pump: false });
    const page = await client.ok<{ items: unknown[] }>('UsersRequest', {});
    expect(page.items).toHaveLength(3);
    client.close();
  });

  it('refuses to start with an invalid config and names the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-config-'));
    dirs.push(dir);
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ servers: [{ name: 'x', family: 'PF6', managers: [] }] }));
    await expect(startProcess({ SIM_CONFIG: path })).rejects.toThrow(/servers\.0\.family/);
  });
});
