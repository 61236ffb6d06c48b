/**
 * Self-healing under `npm start`: the broker, then the simulator, killed with SIGKILL are started again by the
 * launcher's supervisor while the edge stays up; calls made meanwhile are answered `NoConnect` (never a reset
 * connection) and succeed again once the process is back.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './support.js';

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
let output = '';
const dataDir = mkdtempSync(join(tmpdir(), 'gateway-heal-'));
/** Every broker and simulator process the launcher reported, so none outlives a failed test. */
const reportedPids = () => [...output.matchAll(/pid (\d+)\)/g)].map((m) => Number(m[1]));
afterAll(async () => {
  if (launcher && launcher.exitCode === null && launcher.signalCode === null) {
    launcher.kill('SIGINT');
    await eventually(() => Promise.resolve(launcher!.exitCode !== null || launcher!.signalCode !== null), 15_000, 100);
    if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGKILL');
  }
  for (const pid of reportedPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** `ok`, `reset`, a v2 error code or `status <n>`. */
type Seen = string;

describe('npm start heals a crashed broker or simulator', () => {
  it('restarts each after SIGKILL while the edge stays up and answers NoConnect meanwhile', async () => {
    const [port, brokerPort, simPort] = [await freePort(), await freePort(), await freePort()];
    launcher = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
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
    launcher.stdout!.on('data', (d) => {
      output += d;
    });
    launcher.stderr!.on('data', (d) => {
      output += d;
    });
    expect(
      await eventually(() => Promise.resolve(output.includes('Ctrl-C stops everything')), 60_000, 100),
      output,
    ).toBe(true);
    const base = `http://127.0.0.1:${port}`;
    const pf4 = output.match(/demo PF4\s+([0-9a-f-]{36})/)![1];
    const brokerPid = Number(output.match(/broker .*; pid (\d+)\)/)![1]);
    const simPid = Number(output.match(/simulator .*; pid (\d+)\)/)![1]);
    expect(await eventually(async () => (await fetch(`${base}/healthz`)).status === 200, 30_000, 200)).toBe(true);
    const tokenRes = await fetch(`${base}/connect/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('demo:demo-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=webapi',
    });
    const { access_token: token } = (await tokenRes.json()) as { access_token: string };

    // The edge's liveness, watched throughout: every probe must be answered 200.
    let watching = true;
    const liveness = { probes: 0, failures: [] as string[] };
    const watcher = (async () => {
      while (watching) {
        liveness.probes++;
        await fetch(`${base}/livez`).then(
          (res) => {
            if (res.status !== 200) liveness.failures.push(`status ${res.status}`);
          },
          (error: Error) => {
            liveness.failures.push(error.message);
          },
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    /** A live read through the whole stack: `ok`, the v2 error code, or `reset` when no HTTP answer came. */
    const call = async (): Promise<Seen> => {
      try {
        const res = await fetch(`${base}/api/v2/PF4/${pf4}/ServerTime`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const body = (await res.json()) as { data: unknown; error: { code: string } | null };
        return body.error === null && typeof body.data === 'string'
          ? 'ok'
          : (body.error?.code ?? `status ${res.status}`);
      } catch {
        return 'reset';
      }
    };

    /** Kills a process and calls until the supervisor has it back and a call succeeds; returns every answer seen. */
    const killAndCall = async (name: 'broker' | 'sim', pid: number): Promise<Seen[]> => {
      expect(await call()).toBe('ok');
      process.kill(pid, 'SIGKILL');
      const seen: Seen[] = [];
      const end = Date.now() + 60_000;
      while (Date.now() < end) {
        seen.push(await call());
        if (seen.at(-1) === 'ok' && output.includes(`stack: ${name} restarted on port`)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return seen;
    };

    const duringBroker = await killAndCall('broker', brokerPid);
    expect(output).toContain('stack: broker exited (signal SIGKILL); restarting it in');
    expect(output).toContain(`stack: broker restarted on port ${brokerPort}`);
    expect(duringBroker).toContain('NoConnect');
    expect(duringBroker.filter((s) => s !== 'NoConnect' && s !== 'ok')).toEqual([]);
    expect(duringBroker.at(-1)).toBe('ok');

    const duringSim = await killAndCall('sim', simPid);
    expect(output).toContain('stack: sim exited (signal SIGKILL); restarting it in');
    expect(output).toContain(`stack: sim restarted on port ${simPort}`);
    expect(duringSim).toContain('NoConnect');
    expect(duringSim.filter((s) => s !== 'NoConnect' && s !== 'ok')).toEqual([]);
    expect(duringSim.at(-1)).toBe('ok');

    // Whole again: every tier up, the launcher still running, the edge never down.
    expect(await eventually(async () => (await fetch(`${base}/healthz`)).status === 200, 30_000, 200)).toBe(true);
    watching = false;
    await watcher;
    expect(liveness.probes).toBeGreaterThan(0);
    expect(liveness.failures).toEqual([]);
    expect(launcher.exitCode).toBeNull();
    expect(output).not.toContain('stopping the stack');

    // Ctrl-C still stops every process, the restarted ones included.
    const restartedPids = [...output.matchAll(/stack: (?:broker|sim) restarted on port \d+ \(pid (\d+)\)/g)].map((m) =>
      Number(m[1]),
    );
    expect(restartedPids).toHaveLength(2);
    launcher.kill('SIGINT');
    expect(
      await eventually(
        () => Promise.resolve(launcher!.exitCode !== null || launcher!.signalCode !== null),
        20_000,
        100,
      ),
    ).toBe(true);
    for (const pid of restartedPids)
      expect(await eventually(() => Promise.resolve(!alive(pid)), 10_000, 100), `pid ${pid} still runs`).toBe(true);
  }, 180_000);
});
