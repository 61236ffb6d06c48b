/**
 * What the broker image runs, without a container runtime: the bundle `npm run build:broker` makes from the files the
 * Dockerfile's build stage copies, and from nothing else, started with plain `node`, as the image's CMD does, against the bundled simulator; its health check
 * passes while the trading server is down, where /healthz does not; the platform file takes a password from the
 * environment (`passwordEnv`, what compose.yaml uses); and the Dockerfile and compose file say what
 * docs/deploying.md promises (Node 20, a non-root user, the health check, the commands the bundle provides, the
 * simulator taking the broker container's manager sessions and nobody else's fault controls).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePlatforms } from '../../broker/platforms/platformsFile.js';
import { brokerEnvironment, readEnvironment, simEnvironment } from '../../shared/environment.js';
import { peerFilter } from '../../bridge/kit/index.js';
import { DEMO_PF4_ID, DEMO_PF5_ID } from '../../launcher/demo.js';
import { eventually } from './support.js';

const root = join(import.meta.dirname, '..', '..');
// Inside the repository, so the bundle's package imports resolve to node_modules as they do in the image.
const outdir = join(root, 'dist', `image-test-${process.pid}`);
const dir = mkdtempSync(join(tmpdir(), 'broker-image-'));
const children: ChildProcess[] = [];

const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

function node(
  args: string[],
  env: Record<string, string>,
  cwd = root,
): { child: ChildProcess; lines: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr }).on('line', (l) => lines.push(l));
  return { child, lines, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/**
 * What the Dockerfile's build stage copies (`COPY <from> <to>` before the second FROM, relative to /app), so the
 * bundle is built from those files alone: a folder the bundle imports and the image does not copy fails the build
 * here as it would in `docker build`.
 */
function buildStageCopies(): Array<[string, string]> {
  const text = readFileSync(join(root, 'broker', 'Dockerfile'), 'utf8');
  const stage = text.split(/^FROM /m)[1] ?? '';
  return [...stage.matchAll(/^COPY (?!--)(.+)$/gm)].flatMap((m) => {
    const parts = m[1].trim().split(/\s+/);
    const to = parts.pop()!.replace(/^\.\/?/, '');
    return parts.map((from): [string, string] => [
      from,
      to.endsWith('/') || parts.length > 1 || to === '' ? join(to, basename(from)) : to,
    ]);
  });
}

beforeAll(async () => {
  // The build stage's /app: what the Dockerfile copies, beside this checkout's node_modules (its `npm ci`).
  const app = join(dir, 'app');
  mkdirSync(app);
  for (const [from, to] of buildStageCopies()) cpSync(join(root, from), join(app, to), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(app, 'node_modules'), 'dir');
  const build = node(['--import', 'tsx', join(app, 'scripts', 'buildBroker.ts'), '--outdir', outdir], {}, app);
  expect(await build.exited, build.lines.join('\n')).toBe(0);
}, 120_000);
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(outdir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('the bundled broker and simulator', () => {
  it('serve the demo platforms, and the health check follows /livez, not the trading server', async () => {
    const password = 'image-test-manager-password';
    const sim = node([join(outdir, 'sim/main.js')], { SIM_PORT: '0', SIM_MANAGER_PASSWORD: password });
    const simReady = await eventually(
      () =>
        Promise.resolve(
          sim.lines
            .map((l): { msg?: string; port?: number } | null => {
              try {
                return JSON.parse(l);
              } catch {
                return null;
              }
            })
            .find((m) => m?.msg === 'sim listening'),
        ),
      30_000,
      50,
    );
    if (!simReady) throw new Error(`the simulator did not start: ${sim.lines.join('\n')}`);
    const platforms = join(dir, 'broker-platforms.json');
    writeFileSync(
      platforms,
      JSON.stringify({
        platforms: [
          {
            id: DEMO_PF4_ID,
            family: 'PF4',
            server: `ws://127.0.0.1:${simReady.port}/demo-pf4`,
            login: 1000,
            passwordEnv: 'SIM_MANAGER_PASSWORD',
          },
          {
            id: DEMO_PF5_ID,
            family: 'PF5',
            server: `ws://127.0.0.1:${simReady.port}/demo-pf5`,
            login: 1000,
            passwordEnv: 'SIM_MANAGER_PASSWORD',
          },
        ],
      }),
    );
    const port = await freePort();
    const env = {
      BROKER_SECRET: 'image-test-secret',
      BROKER_PORT: String(port),
      BROKER_PLATFORMS_FILE: platforms,
      SIM_MANAGER_PASSWORD: password,
      DATA_DIR: dir,
    };
    const broker = node([join(outdir, 'broker/main.js')], env);
    await eventually(() => Promise.resolve(broker.lines.some((l) => l.includes('"broker listening"'))), 30_000, 50);
    const base = `http://127.0.0.1:${port}`;
    const health = await eventually(
      async () => {
        const res = await fetch(`${base}/healthz`);
        return res.status === 200 ? res.json() : undefined;
      },
      30_000,
      100,
    );
    expect(health).toMatchObject({
      status: 'ok',
      platforms: { [DEMO_PF4_ID]: { up: true }, [DEMO_PF5_ID]: { up: true } },
    });
    const check = () => node([join(outdir, 'broker/healthcheck.js')], { BROKER_PORT: String(port) }).exited;
    expect(await check()).toBe(0);

    sim.child.kill('SIGTERM');
    expect(
      await eventually(async () => (await fetch(`${base}/healthz`)).status === 503 || undefined, 20_000, 100),
    ).toBe(true);
    expect(await check()).toBe(0);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(broker.lines.join('\n')).not.toContain(password);

    broker.child.kill('SIGTERM');
    expect(await broker.exited).toBe(0);
    expect(await check()).toBe(1);
  }, 120_000);
});

describe('platform file passwords from the environment', () => {
  const entry = { id: 'p1', family: 'PF4', server: 'ws://sim:8791/demo-pf4', login: 1000 };

  it('reads passwordEnv from the environment and refuses it unset, or beside a password', () => {
    expect(
      parsePlatforms(JSON.stringify({ platforms: [{ ...entry, passwordEnv: 'PW' }] }), { PW: 's3cret' })[0].password,
    ).toBe('s3cret');
    expect(() => parsePlatforms(JSON.stringify({ platforms: [{ ...entry, passwordEnv: 'PW' }] }), {})).toThrow(
      /platforms\.0\.passwordEnv: environment variable PW is not set/,
    );
    expect(() =>
      parsePlatforms(JSON.stringify({ platforms: [{ ...entry, passwordEnv: 'PW', password: 'x' }] }), { PW: 'y' }),
    ).toThrow(/password or passwordEnv, not both/);
    expect(() => parsePlatforms(JSON.stringify({ platforms: [entry] }), {})).toThrow(/password or passwordEnv/);
  });

  it("compose's platform file serves the demo platforms from the simulator service", () => {
    const platforms = parsePlatforms(readFileSync(join(root, 'deploy/compose/broker-platforms.json'), 'utf8'), {
      SIM_MANAGER_PASSWORD: 'x',
    });
    expect(platforms.map((p) => [p.id, p.server])).toStrictEqual([
      [DEMO_PF4_ID, 'ws://sim:8791/demo-pf4'],
      [DEMO_PF5_ID, 'ws://sim:8791/demo-pf5'],
    ]);
  });
});

describe('broker/Dockerfile and compose.yaml', () => {
  const dockerfile = readFileSync(join(root, 'broker/Dockerfile'), 'utf8');

  it('builds on Node 20, runs as the unprivileged node user with a health check, and runs what the bundle provides', () => {
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThan(0);
    for (const image of froms) expect(image).toMatch(/^node:20[-.]/);
    const users = [...dockerfile.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBe('node');
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "dist\/broker\/healthcheck\.js"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/broker\/main\.js"\]$/m);
    for (const built of ['broker/main.js', 'broker/healthcheck.js', 'sim/main.js'])
      expect(existsSync(join(outdir, built)), built).toBe(true);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm))
      expect(existsSync(join(root, source)), source).toBe(true);
  });

  it('runs the broker and the simulator from that image, the simulator unpublished', () => {
    const compose = load(readFileSync(join(root, 'compose.yaml'), 'utf8')) as { services: Record<string, any> };
    expect(Object.keys(compose.services).sort()).toStrictEqual(['broker', 'sim']);
    for (const service of Object.values(compose.services))
      expect(service.build).toStrictEqual({ context: '.', dockerfile: 'broker/Dockerfile' });
    expect(compose.services.sim.command).toStrictEqual(['node', 'dist/sim/main.js']);
    expect(compose.services.sim.ports).toBeUndefined();
    expect(compose.services.sim.environment.SIM_HOST).toBe('0.0.0.0');
    const broker = compose.services.broker;
    expect(broker.command).toBeUndefined();
    expect(broker.environment.BROKER_SECRET).toMatch(/^\$\{BROKER_SECRET:\?/);
    const [mount] = broker.volumes as string[];
    expect(existsSync(join(root, mount.split(':')[0]))).toBe(true);
    expect(mount.split(':')[1]).toBe(broker.environment.BROKER_PLATFORMS_FILE);
    expect(broker.depends_on.sim.condition).toBe('service_healthy');
    // A stop waits for the drain's bound before it kills.
    expect(Number(/^(\d+)s$/.exec(broker.stop_grace_period)?.[1])).toBeGreaterThan(
      readEnvironment(brokerEnvironment, { BROKER_SECRET: 'x' }).BROKER_DRAIN_SECONDS,
    );
  });

  /** A value of the file as compose reads it with `dotenv` beside it: `${VAR}`, `${VAR:-default}`, `${VAR:?error}`. */
  const interpolate = (value: string, dotenv: Record<string, string>) =>
    value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, rest?: string) => {
      if (dotenv[name]) return dotenv[name];
      if (kind === '-') return rest!;
      throw new Error(`${name} is required: ${rest ?? ''}`);
    });

  it('lets the simulator take manager sessions from the compose network only, its fault controls from loopback only', () => {
    const compose = load(readFileSync(join(root, 'compose.yaml'), 'utf8')) as {
      services: Record<string, any>;
      networks: Record<string, any>;
    };
    // Both services on the default network, whose subnet is fixed so the simulator can name it.
    for (const service of Object.values(compose.services)) expect(service.networks).toBeUndefined();
    for (const [dotenv, subnet, inside, outside] of [
      [{}, '172.29.79.0/24', '172.29.79.3', '172.29.80.3'],
      [{ GATEWAY_SUBNET: '10.77.0.0/16' }, '10.77.0.0/16', '10.77.4.2', '172.29.79.3'],
    ] as Array<[Record<string, string>, string, string, string]>) {
      const full = { ...dotenv, SIM_MANAGER_PASSWORD: 'x' };
      expect(interpolate(compose.networks.default.ipam.config[0].subnet, full)).toBe(subnet);
      const simEnv = Object.fromEntries(
        Object.entries(compose.services.sim.environment as Record<string, string>).map(([k, v]) => [
          k,
          interpolate(v, full),
        ]),
      );
      const env = readEnvironment(simEnvironment, simEnv);
      const [address, prefix] = subnet.split('/');
      expect(env.SIM_MANAGER_ALLOW).toStrictEqual([{ family: 'ipv4', address, prefix: Number(prefix) }]);
      // The fault controls stay loopback-only: no token is set, and the health check asks them from inside.
      expect(env.SIM_CONTROL_TOKEN).toBeUndefined();
      const allowed = peerFilter(env.SIM_MANAGER_ALLOW);
      expect([inside, outside, '127.0.0.1'].map(allowed)).toStrictEqual([true, false, true]);
    }
    expect(compose.services.sim.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8791/control/');
    const example = readFileSync(join(root, 'deploy/compose.env.example'), 'utf8');
    expect(example).toContain('# GATEWAY_SUBNET=172.29.79.0/24');
  });
});
