/**
 * The mistakes a newcomer makes, each ending in one clear line instead of a stack trace or a hidden cause: a port
 * already in use names the variable to change (edge, broker and simulator through `npm start`), a simulator or a
 * broker that fails at start shows its own error line through the launcher, wrong environment values are refused
 * by name before anything starts, and an old Node.js is refused in one line by every entry.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
let dir: string;
let taken: Server;
let takenPort: number;
/** Loaded before an entry, makes the process report an old version, as an old installation would. */
let oldNode: string;

/** Runs an entry to its end; the launcher must exit by itself here (every case is a refused start). */
function run(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, args, {
    cwd: root,
    // The launcher's children inherit this environment; the ports are the test's, never the defaults.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: join(dir, `data-${Math.random().toString(36).slice(2)}`),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const start = (env: Record<string, string>) => run(['--import', 'tsx', 'scripts/start.ts'], env);
/** The launcher's own refusal lines (children's log lines aside). */
const refusals = (text: string) => text.split('\n').filter((l) => l.startsWith('start '));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-newcomer-'));
  taken = createServer();
  await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
  takenPort = (taken.address() as { port: number }).port;
  oldNode = join(dir, 'old-node.mjs');
  writeFileSync(oldNode, "Object.defineProperty(process, 'version', { value: 'v18.19.0' });\n");
});
afterAll(async () => {
  await new Promise((done) => taken.close(done));
  rmSync(dir, { recursive: true, force: true });
});

// Every case is a start of its own (own data folder, own ports) that ends by itself: the cases run side by side.
describe.concurrent('npm start refuses wrong environment values by name, before starting anything', () => {
  it('one line per wrong variable', async ({ expect }) => {
    const { code, out, err } = await start({
      PORT: 'eighty',
      SIM_SEED: '-3',
      TOKEN_TTL_SECONDS: '0',
      AUTH_ISSUER: 'https://id.example.com/',
    });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(refusals(err)).toHaveLength(4);
    for (const name of ['AUTH_JWKS_URL', 'TOKEN_TTL_SECONDS', 'PORT', 'SIM_SEED'])
      expect(err).toMatch(new RegExp(`^start refused: ${name} `, 'm'));
    expect(err).not.toMatch(/\n\s+at /); // no stack trace
  });
});

describe.concurrent('a port already in use names the variable to change', () => {
  it.for([
    ['SIM_PORT', 'sim'],
    ['BROKER_PORT', 'broker'],
    ['PORT', null],
  ] as const)('%s', async ([variable, processName], { expect }) => {
    // The other two ports are 0 (the system's choice at bind time): a port picked free beforehand could be taken by
    // a side-by-side case's process before this start binds it.
    const ports: Record<string, string> = { PORT: '0', BROKER_PORT: '0', SIM_PORT: '0' };
    ports[variable] = String(takenPort);
    const { code, err } = await start(ports);
    expect(code).toBe(1);
    const line = err.split('\n').find((l) => l.startsWith('start failed: '));
    expect(line).toBe(
      `start failed: ${processName ? `${processName}: ` : ''}port ${takenPort} on 127.0.0.1 is already in use (another copy running, or npm start?): set ${variable} to a free port, or 0 for any`,
    );
    expect(err).not.toMatch(/\n\s+at /);
  });
});

describe.concurrent('a process that fails at start shows its own error line', () => {
  it('the simulator, with an unreadable SIM_CONFIG', async ({ expect }) => {
    const { code, err } = await start({
      PORT: '0',
      BROKER_PORT: '0',
      SIM_PORT: '0',
      SIM_CONFIG: join(dir, 'missing-sim.json'),
    });
    expect(code).toBe(1);
    expect(err).toMatch(new RegExp(`^start failed: sim: SIM_CONFIG ${join(dir, 'missing-sim.json')}: .*ENOENT`, 'm'));
  });

  it('the broker, with a TLS certificate it cannot read', async ({ expect }) => {
    const { code, err } = await start({
      PORT: '0',
      BROKER_PORT: '0',
      SIM_PORT: '0',
      BROKER_TLS_CERT: join(dir, 'missing-cert.pem'),
      BROKER_TLS_KEY: join(dir, 'missing-key.pem'),
    });
    expect(code).toBe(1);
    expect(err).toMatch(
      new RegExp(`^start failed: broker: BROKER_TLS_CERT: cannot read ${join(dir, 'missing-cert.pem')}: ENOENT$`, 'm'),
    );
  });
});

describe.concurrent('an old Node.js is refused in one line', () => {
  it.for(['scripts/start.ts', 'broker/main.ts', 'sim/main.ts', 'scripts/registry.ts', 'scripts/secrets.ts'])(
    '%s',
    async (entry, { expect }) => {
      const { code, out, err } = await run(['--import', oldNode, '--import', 'tsx', entry], {
        BROKER_SECRET: 'x',
        BROKER_PORT: '0',
        SIM_PORT: '0',
      });
      expect(code).toBe(1);
      expect(out).toBe('');
      expect(err.trim()).toBe(
        'Node.js v18.19.0 is too old: this project needs Node.js 20.19 or newer (engines.node in package.json); install a newer Node.js and run again',
      );
    },
  );
});
