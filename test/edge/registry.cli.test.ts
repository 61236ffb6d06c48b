/**
 * The registry CLI end to end on a temporary DATA_DIR: real `tsx scripts/registry.ts` processes where the process
 * matters (help and an exit code, the first command migrating the fresh registry, a client added while an edge serves
 * the same folder), and the CLI's `main` in this process for the rest, on the registry of one edge started on that
 * folder. The edge accepts the client the CLI printed, serves the platforms it added, and the stored rows hold no
 * clear secret; the broker's platform file names the manager password's variable, never the password, and a broker
 * given that file and the variable logs in to the trading server with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestEdge, type TestEdge } from '../support/edge.js';
import { main, type RegistryRunner } from '../../scripts/registry.js';
import { RegistryStore } from '../../workers/registry/registryStore.js';
import { startSim } from '../../sim/sim.js';
import { nodeServiceBundle } from '../../launcher/bundles.js';
import { EDGE_WORKER } from '../../launcher/edge.js';
import { until } from '../support/until.js';

const root = resolve(import.meta.dirname, '../..');
const MANAGER_PASSWORD = 'manager-pw-from-env';
let dataDir: string;
let edge: TestEdge;
let store: RegistryStore;

type Run = { code: number | null; stdout: string; stderr: string };
const environment = () => ({
  ...process.env,
  DATA_DIR: dataDir,
  ACME_MANAGER_PASSWORD: MANAGER_PASSWORD,
  BROKER_PLATFORMS_FILE: '',
});

/** A real `scripts/registry.ts` process. */
function registryProcess(...args: string[]): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/registry.ts'), ...args], {
      cwd: root,
      env: environment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('error', fail);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** The same command run by the CLI's `main` in this process, on the edge's registry. */
async function registry(...args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    args,
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    {
      env: environment(),
      registry: (run) => run(store),
    },
  );
  return { code, stdout: out.map((l) => `${l}\n`).join(''), stderr: err.map((l) => `${l}\n`).join('') };
}
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;
const brokerFile = () => join(dataDir, 'broker-platforms.json');

let acme: { id: string; name: string };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'registry-cli-'));
  // The first command migrates the fresh registry, as on an operator's first run.
  const added = await registryProcess('org', 'add', '--name', 'Acme Broker', '--json');
  expect(added.code).toBe(0);
  acme = json(added);
  edge = await startTestEdge({ dataDir: join(dataDir, 'edge'), seed: false });
  store = new RegistryStore(await edge.db());
}, 120_000);
afterAll(async () => {
  await edge?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function token(clientId: string, secret: string, scope = 'webapi'): Promise<Response> {
  return fetch(new URL('/connect/token', edge.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
    },
    body: `grant_type=client_credentials&scope=${scope}`,
  });
}

/** GETs `path` of the edge as the client, with a token holding webapi.audit. */
async function asAuditor(client: { clientId: string; clientSecret: string }) {
  const issued = await token(client.clientId, client.clientSecret, 'webapi webapi.audit');
  const { access_token } = (await issued.json()) as { access_token: string };
  return (path: string) => fetch(new URL(path, edge.url), { headers: { authorization: `Bearer ${access_token}` } });
}

describe('registry CLI', () => {
  it('prints help and refuses bad usage with exit code 2 naming the flag', async () => {
    const [help, process2] = await Promise.all([registryProcess('help'), registryProcess('org', 'add')]);
    expect(help.code).toBe(0);
    for (const command of [
      'org add',
      'platform add',
      'platform brokers',
      'platform home',
      '--home-region',
      'org jurisdiction',
      '--jurisdiction',
      '--default',
      'client add',
      'platform remove',
      '--manager-password-env',
    ]) {
      expect(help.stdout).toContain(command);
    }
    // A real process exits with the code `main` answers.
    expect(process2.code).toBe(2);
    expect(process2.stderr).toMatch(/--name is required/);
    expect(process2.stderr).toContain('run `npm run registry -- help` for usage');

    const platform = ['platform', 'add', '--org', randomUUID(), '--type', 'PF4', '--name', 'X'];
    const cases: Array<[string[], RegExp | string]> = [
      [['org', 'add'], /--name is required/],
      [['org', 'add', '--name', 'X', '--id', 'nope'], /--id must be a uuid/],
      [['platform', 'add', '--org', 'nope', '--type', 'PF4', '--name', 'X'], /--org must be a uuid/],
      [
        ['platform', 'add', '--org', randomUUID(), '--type', 'PF6', '--name', 'X'],
        /--type must be one of PF4, PF5, PFOther/,
      ],
      [[...platform, '--server', 'ws://127.0.0.1:1/x'], /go together/],
      [
        [
          ...platform,
          '--server',
          'http://x',
          '--manager-login',
          '1',
          '--manager-password-env',
          'ACME_MANAGER_PASSWORD',
        ],
        /--server must be a ws or wss URL/,
      ],
      [
        [
          ...platform,
          '--server',
          'ws://x',
          '--manager-login',
          'one',
          '--manager-password-env',
          'ACME_MANAGER_PASSWORD',
        ],
        /--manager-login must be a positive integer/,
      ],
      [
        [...platform, '--server', 'ws://x', '--manager-login', '1', '--manager-password-env', 'NOT_SET_ANYWHERE'],
        /NOT_SET_ANYWHERE is not set/,
      ],
      [[...platform, '--manager-password', 'secret'], /Unknown option '--manager-password'/],
      [
        [...platform, '--broker-url', 'ftp://127.0.0.1:1'],
        '--broker-url must be absolute http(s) URLs separated by commas; not one: ftp://127.0.0.1:1',
      ],
      [
        [...platform, '--broker-url', 'http://127.0.0.1:1,http://127.0.0.1:2', '--broker-url', 'http://127.0.0.1:1'],
        '--broker-url names http://127.0.0.1:1 twice',
      ],
      [[...platform, '--broker-url', ' , '], '--broker-url must name at least one broker URL'],
      [
        [...platform, '--broker-url', Array.from({ length: 9 }, (_, i) => `http://127.0.0.1:${i + 1}`).join(',')],
        '--broker-url must name at most 8 broker URLs',
      ],
      [['platform', 'brokers'], 'expected a platform id and its broker URLs (or --default)'],
      [['platform', 'brokers', 'nope', 'http://127.0.0.1:1'], /PLATFORM_ID must be a uuid/],
      [['platform', 'brokers', randomUUID()], 'expected the broker URLs after the platform id (or --default)'],
      [['platform', 'brokers', randomUUID(), '--default', 'http://127.0.0.1:1'], '--default goes without broker URLs'],
      [
        ['platform', 'brokers', randomUUID(), 'http://127.0.0.1:1', 'example.com'],
        'URL must be absolute http(s) URLs separated by commas; not one: example.com',
      ],
      [
        [...platform, '--home-region', 'WEUR'],
        '--home-region must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
      ],
      [['platform', 'home'], 'expected a platform id and its home region (or --default)'],
      [['platform', 'home', 'nope', 'weur'], /PLATFORM_ID must be a uuid/],
      [['platform', 'home', randomUUID()], 'expected one region after the platform id (or --default)'],
      [['platform', 'home', randomUUID(), 'weur', 'eeur'], 'expected one region after the platform id (or --default)'],
      [
        ['org', 'add', '--name', 'X', '--jurisdiction', 'eur'],
        '--jurisdiction must be one of eu, fedramp, fedramp-high, us',
      ],
      [['org', 'jurisdiction'], 'expected an organization id and its jurisdiction (or --none)'],
      [['org', 'jurisdiction', 'nope', 'eu'], /ORG_ID must be a uuid/],
      [['org', 'jurisdiction', randomUUID()], 'expected one jurisdiction after the organization id (or --none)'],
      [['org', 'jurisdiction', randomUUID(), 'mars'], 'JURISDICTION must be one of eu, fedramp, fedramp-high, us'],
      [['org', 'jurisdiction', randomUUID(), 'eu', '--none'], '--none goes without a jurisdiction'],
      [['client', 'add', '--org', randomUUID(), '--id', 'has:colon'], /--id: client id must be/],
      [['org', 'remove'], /expected exactly one organization id/],
      [['nonsense'], /unknown command: nonsense/],
    ];
    for (const [args, message] of cases) {
      const r = await registry(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
    }
  });

  it('administers the registry that an edge on the same DATA_DIR serves', async () => {
    const org = acme;
    expect(org.name).toBe('Acme Broker');

    const live = await registry(
      'platform',
      'add',
      '--org',
      org.id,
      '--type',
      'PF4',
      '--name',
      'Acme Live',
      '--server',
      'ws://127.0.0.1:8791/demo-pf4',
      '--manager-login',
      '1000',
      '--manager-password-env',
      'ACME_MANAGER_PASSWORD',
    );
    expect(live.code).toBe(0);
    expect(live.stdout).toMatch(
      /platform [0-9a-f-]{36} added: PF4 "Acme Live" in organization [0-9a-f-]{36}, served by \(default\)/,
    );
    expect(live.stdout).toContain(brokerFile());
    expect(live.stdout + live.stderr).not.toContain(MANAGER_PASSWORD);
    const liveId = /platform ([0-9a-f-]{36}) added/.exec(live.stdout)![1];
    expect(JSON.parse(readFileSync(brokerFile(), 'utf8'))).toEqual({
      platforms: [
        {
          id: liveId,
          family: 'PF4',
          server: 'ws://127.0.0.1:8791/demo-pf4',
          login: 1000,
          passwordEnv: 'ACME_MANAGER_PASSWORD',
        },
      ],
    });
    expect(readFileSync(brokerFile(), 'utf8')).not.toContain(MANAGER_PASSWORD);

    const demoId = randomUUID();
    const demo = await registry(
      'platform',
      'add',
      '--org',
      org.id,
      '--type',
      'PF5',
      '--name',
      'Acme Demo',
      '--id',
      demoId.toUpperCase(),
    );
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain(`platform ${demoId} added`);
    expect(demo.stdout).toMatch(/note: the broker serves this platform only once its platform file/);
    const dup = await registry('platform', 'add', '--org', org.id, '--type', 'PF5', '--name', 'Dup', '--id', demoId);
    expect([dup.code, dup.stderr]).toEqual([1, `error: platform ${demoId} already exists\n`]);

    // A client added by a real process while the edge serves the same folder.
    const added = await registryProcess('client', 'add', '--org', org.id, '--name', 'Acme back office');
    expect(added.code).toBe(0);
    const clientId = /client_id\s+(\S+)/.exec(added.stdout)![1];
    const secret = /client_secret\s+(\S+)/.exec(added.stdout)![1];
    expect(added.stdout).toMatch(/shown only this once/);

    const platforms = json<Array<{ id: string; type: string; inBrokerFile: boolean }>>(
      await registry('platform', 'list', '--org', org.id, '--json'),
    );
    expect(platforms.map((p) => [p.id, p.type, p.inBrokerFile])).toEqual([
      [liveId, 'PF4', true],
      [demoId, 'PF5', false],
    ]);
    const clientList = await registry('client', 'list');
    expect(clientList.stdout).toContain(clientId);
    expect(clientList.stdout).not.toContain(secret);
    expect(clientList.stdout).not.toMatch(/hash|salt/i);
    expect((await registry('org', 'list')).stdout).toMatch(new RegExp(`${org.id}\\s+Acme Broker`));

    const busy = await registry('org', 'remove', org.id);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('still has 2 platform(s), 1 client(s) and 0 webhook endpoint(s)');

    // The edge npm start would run on this DATA_DIR accepts the printed secret and serves the platforms added.
    const res = await token(clientId, secret);
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    const listed = await fetch(new URL('/api/TradePlatforms', edge.url), {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(((await listed.json()) as Array<{ id: string; name: string }>).map((p) => p.name)).toEqual([
      'Acme Live',
      'Acme Demo',
    ]);
    const db = await edge.db();
    const rows = (
      await db
        .prepare('SELECT * FROM api_clients WHERE organization_id = ?')
        .bind(org.id)
        .all<Record<string, unknown>>()
    ).results;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ client_id: clientId, organization_id: org.id, iterations: 100_000, disabled: 0 });
    for (const value of Object.values(rows[0])) expect(String(value)).not.toContain(secret);

    const disabled = await registry('client', 'disable', clientId);
    expect(disabled.stdout).toContain(`client ${clientId} disabled`);
    expect((await token(clientId, secret)).status).toBe(401);

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
  });

  it("writes the manager password's variable to the broker's platform file, and a broker with that variable logs in", async () => {
    const sim = await startSim({ managerPassword: MANAGER_PASSWORD });
    const file = join(dataDir, 'login-broker-platforms.json');
    const brokerDir = mkdtempSync(join(tmpdir(), 'registry-cli-broker-'));
    let broker: ReturnType<typeof spawn> | undefined;
    try {
      const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Login Org', '--json'));
      const server = `ws://127.0.0.1:${sim.port}/demo-pf4`;
      const args = [
        'platform',
        'add',
        '--org',
        org.id,
        '--type',
        'PF4',
        '--name',
        'Login',
        '--server',
        server,
        '--manager-login',
        '1000',
        '--manager-password-env',
        'ACME_MANAGER_PASSWORD',
        '--json',
      ];
      const out: string[] = [];
      const run = (argv: string[], env: NodeJS.ProcessEnv) =>
        main(argv, { out: (l) => out.push(l), err: (l) => out.push(l) }, { env, registry: (r) => r(store) });
      expect(await run(args, { ...environment(), BROKER_PLATFORMS_FILE: file })).toBe(0);
      const { id } = JSON.parse(out[0]) as { id: string };
      const text = readFileSync(file, 'utf8');
      expect(JSON.parse(text)).toEqual({
        platforms: [{ id, family: 'PF4', server, login: 1000, passwordEnv: 'ACME_MANAGER_PASSWORD' }],
      });
      expect(text).not.toContain(MANAGER_PASSWORD);
      expect(out.join('\n')).not.toContain(MANAGER_PASSWORD);

      // For a broker on another host (--remote) the variable need not be set on this one; locally it must be.
      const remoteFile = join(dataDir, 'remote-broker-platforms.json');
      const remoteArgs = [
        '--remote',
        'platform',
        'add',
        '--org',
        org.id,
        '--type',
        'PF5',
        '--name',
        'Far',
        '--server',
        'ws://10.0.0.5:8791/live',
        '--manager-login',
        '7',
        '--manager-password-env',
        'FAR_MANAGER_PASSWORD',
        '--json',
      ];
      out.length = 0;
      expect(await run(remoteArgs, { ...environment(), BROKER_PLATFORMS_FILE: remoteFile })).toBe(0);
      const far = JSON.parse(out[0]) as { id: string };
      expect(JSON.parse(readFileSync(remoteFile, 'utf8'))).toEqual({
        platforms: [
          {
            id: far.id,
            family: 'PF5',
            server: 'ws://10.0.0.5:8791/live',
            login: 7,
            passwordEnv: 'FAR_MANAGER_PASSWORD',
          },
        ],
      });

      const port = await new Promise<number>((done) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address() as { port: number };
          probe.close(() => done(free));
        });
      });
      const lines: string[] = [];
      // Started as the launcher starts it: from its kept bundle, or through tsx without one.
      const bundle = await nodeServiceBundle('broker/main.ts');
      broker = spawn(
        process.execPath,
        bundle !== undefined ? ['--enable-source-maps', bundle] : ['--import', 'tsx', join(root, 'broker/main.ts')],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? '',
            BROKER_SECRET: 'registry-cli-secret',
            BROKER_PORT: String(port),
            BROKER_PLATFORMS_FILE: file,
            DATA_DIR: brokerDir,
            ACME_MANAGER_PASSWORD: MANAGER_PASSWORD,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      broker.stdout!.on('data', (d) => lines.push(String(d)));
      broker.stderr!.on('data', (d) => lines.push(String(d)));
      let health: { platforms?: Record<string, { up: boolean }> } = {};
      for (let i = 0; i < 300 && health.platforms?.[id]?.up !== true; i++) {
        await new Promise((r) => setTimeout(r, 100));
        health = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.json() as Promise<typeof health>,
          () => ({}),
        );
      }
      expect(health.platforms?.[id], lines.join('')).toMatchObject({ up: true });
      expect(lines.join('')).not.toContain(MANAGER_PASSWORD);

      for (const p of [id, far.id]) expect((await registry('platform', 'remove', p)).code).toBe(0);
      expect((await registry('org', 'remove', org.id)).code).toBe(0);
    } finally {
      if (broker && broker.exitCode === null) {
        const exited = new Promise((r) => broker!.once('exit', r));
        broker.kill('SIGTERM');
        await exited;
      }
      await sim.close();
      rmSync(brokerDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('names the brokers of a platform in order, changes them, and hands a platform back to the default list', async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Paired Org', '--json'));
    const [a, b, c] = ['http://127.0.0.1:9801', 'https://broker-b.example/', 'http://127.0.0.1:9803'];
    const paired = await registry(
      'platform',
      'add',
      '--org',
      org.id,
      '--type',
      'PF4',
      '--name',
      'Paired',
      '--broker-url',
      `${a}, ${b}`,
      '--broker-url',
      c,
      '--json',
    );
    expect(paired.code).toBe(0);
    const record = json<{ id: string; brokerUrls: string[]; brokerUrl: string; brokerPlatformsFile: null }>(paired);
    expect(record).toMatchObject({
      name: 'Paired',
      type: 'PF4',
      organizationId: org.id,
      brokerUrls: [a, b, c],
      brokerUrl: a,
      brokerPlatformsFile: null,
    });
    const id = record.id;
    const plain = json<{ id: string; brokerUrls: null; brokerUrl: null }>(
      await registry('platform', 'add', '--org', org.id, '--type', 'PF5', '--name', 'Plain', '--json'),
    );
    expect(plain).toMatchObject({ brokerUrls: null, brokerUrl: null });

    // Stored as the list and, for an edge of the previous version, its first entry.
    const columns = () =>
      edge
        .db()
        .then((db) => db.prepare('SELECT broker_urls, broker_url FROM trade_platforms WHERE id = ?').bind(id).first());
    expect(await columns()).toEqual({ broker_urls: JSON.stringify([a, b, c]), broker_url: a });
    const table = (await registry('platform', 'list', '--org', org.id)).stdout.split('\n');
    expect(table[0]).toMatch(/^ID\s+TYPE\s+NAME\s+ORGANIZATION\s+BROKERS\s+HOME\s+IN BROKER FILE$/);
    expect(table[1]).toMatch(
      new RegExp(`^${id}\\s+PF4\\s+Paired\\s+${org.id}\\s+${a},${b},${c}\\s+default \\(HOME_REGION\\)\\s+no$`),
    );
    expect(table[2]).toMatch(
      new RegExp(`^${plain.id}\\s+PF5\\s+Plain\\s+${org.id}\\s+\\(default\\)\\s+default \\(HOME_REGION\\)\\s+no$`),
    );

    const swapped = await registry('platform', 'brokers', id.toUpperCase(), `${c},${a}`);
    expect([swapped.code, swapped.stdout]).toEqual([0, `platform ${id} served by ${c},${a}\n`]);
    expect(await columns()).toEqual({ broker_urls: JSON.stringify([c, a]), broker_url: c });
    const listed = json<Array<{ id: string; brokerUrls: string[] | null; brokerUrl: string | null }>>(
      await registry('platform', 'list', '--org', org.id, '--json'),
    );
    expect(listed.map((p) => [p.id, p.brokerUrls, p.brokerUrl])).toEqual([
      [id, [c, a], c],
      [plain.id, null, null],
    ]);
    const spaced = json<{ brokerUrls: string[] }>(await registry('platform', 'brokers', id, b, a, '--json'));
    expect(spaced.brokerUrls).toEqual([b, a]);

    const back = await registry('platform', 'brokers', id, '--default');
    expect([back.code, back.stdout]).toEqual([0, `platform ${id} served by (default)\n`]);
    expect(await columns()).toEqual({ broker_urls: null, broker_url: null });

    const unknown = randomUUID();
    expect(await registry('platform', 'brokers', unknown, a)).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: platform ${unknown} not found\n`,
    });
    for (const p of [id, plain.id]) expect((await registry('platform', 'remove', p)).code).toBe(0);
    expect((await registry('org', 'remove', org.id)).code).toBe(0);
  });

  it("sets a platform's home region and an organization's jurisdiction, refusing what the rules refuse", async () => {
    const pinned = await registry('org', 'add', '--name', 'EU Org', '--jurisdiction', 'eu');
    expect(pinned.code).toBe(0);
    const org = /^organization (\S+) added: EU Org, pinned to eu\n$/.exec(pinned.stdout)!;
    expect(org).not.toBeNull();
    const orgId = org[1];
    expect(await registry('org', 'add', '--name', 'x', '--jurisdiction', 'EU')).toEqual({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining('--jurisdiction must be one of eu, fedramp, fedramp-high, us'),
    });
    const loose = json<{ id: string; jurisdiction: null }>(
      await registry('org', 'add', '--name', 'Loose Org', '--json'),
    );
    expect(loose.jurisdiction).toBeNull();
    const orgs = (await registry('org', 'list')).stdout.split('\n');
    expect(orgs[0]).toMatch(/^ID\s+NAME\s+JURISDICTION\s+CREATED$/);
    expect(orgs.find((line) => line.startsWith(orgId))).toMatch(new RegExp(`^${orgId}\\s+EU Org\\s+eu\\s+\\S+$`));
    expect(orgs.find((line) => line.startsWith(loose.id))).toMatch(
      new RegExp(`^${loose.id}\\s+Loose Org\\s+-\\s+\\S+$`),
    );
    const listed = json<Array<{ id: string; name: string; jurisdiction: string | null }>>(
      await registry('org', 'list', '--json'),
    );
    expect(listed.find((o) => o.id === orgId)).toMatchObject({ name: 'EU Org', jurisdiction: 'eu' });
    expect(listed.find((o) => o.id === loose.id)).toMatchObject({ jurisdiction: null });
    const orgColumn = () =>
      edge
        .db()
        .then((db) =>
          db
            .prepare('SELECT jurisdiction FROM organizations WHERE id = ?')
            .bind(orgId)
            .first<{ jurisdiction: string | null }>(),
        );
    expect(await orgColumn()).toEqual({ jurisdiction: 'eu' });

    expect(
      await registry('platform', 'add', '--org', orgId, '--type', 'PF4', '--name', 'Far', '--home-region', 'apac'),
    ).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: homeRegion apac lies outside the organization's jurisdiction eu: one of weur, eeur\n",
    });
    const added = json<{ id: string; homeRegion: string; jurisdiction: string }>(
      await registry(
        'platform',
        'add',
        '--org',
        orgId,
        '--type',
        'PF4',
        '--name',
        'Near',
        '--home-region',
        'eeur',
        '--json',
      ),
    );
    expect(added).toMatchObject({ homeRegion: 'eeur', jurisdiction: 'eu' });
    const column = () =>
      edge
        .db()
        .then((db) =>
          db
            .prepare('SELECT home_region FROM trade_platforms WHERE id = ?')
            .bind(added.id)
            .first<{ home_region: string | null }>(),
        );
    expect(await column()).toEqual({ home_region: 'eeur' });
    const plain = await registry('platform', 'add', '--org', orgId, '--type', 'PF5', '--name', 'Plain');
    const plainId =
      /^platform (\S+) added: PF5 "Plain" in organization \S+, served by \(default\), home default \(HOME_REGION\)\n/.exec(
        plain.stdout,
      )![1];
    const platforms = (await registry('platform', 'list', '--org', orgId)).stdout.split('\n');
    expect(platforms[0]).toMatch(/^ID\s+TYPE\s+NAME\s+ORGANIZATION\s+BROKERS\s+HOME\s+IN BROKER FILE$/);
    expect(platforms[1]).toMatch(new RegExp(`^${added.id}\\s+PF4\\s+Near\\s+${orgId}\\s+\\(default\\)\\s+eeur\\s+no$`));
    expect(platforms[2]).toMatch(
      new RegExp(`^${plainId}\\s+PF5\\s+Plain\\s+${orgId}\\s+\\(default\\)\\s+default \\(HOME_REGION\\)\\s+no$`),
    );
    expect(
      json<Array<{ id: string; homeRegion: string | null; jurisdiction: string }>>(
        await registry('platform', 'list', '--org', orgId, '--json'),
      ).map((p) => [p.id, p.homeRegion, p.jurisdiction]),
    ).toEqual([
      [added.id, 'eeur', 'eu'],
      [plainId, null, 'eu'],
    ]);
    expect(await registry('platform', 'home', plainId, 'wnam')).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: homeRegion wnam lies outside the organization's jurisdiction eu: one of weur, eeur\n",
    });
    expect((await registry('platform', 'remove', plainId)).code).toBe(0);

    const moved = await registry('platform', 'home', added.id.toUpperCase(), 'weur');
    expect([moved.code, moved.stdout]).toEqual([0, `platform ${added.id} at home in weur\n`]);
    expect(await column()).toEqual({ home_region: 'weur' });
    expect(await registry('platform', 'home', added.id, 'mars')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('REGION must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me'),
    });
    expect(await registry('platform', 'home', added.id, 'weur', '--default')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--default goes without a region'),
    });
    const back = json<{ homeRegion: null }>(await registry('platform', 'home', added.id, '--default', '--json'));
    expect(back.homeRegion).toBeNull();
    expect(await column()).toEqual({ home_region: null });

    expect(await registry('org', 'jurisdiction', orgId, 'us')).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: organization ${orgId} has 1 platform(s), whose objects and their stored idempotency records would be left in jurisdiction eu: set its jurisdiction before adding platforms, or remove them first\n`,
    });
    expect(await orgColumn()).toEqual({ jurisdiction: 'eu' });
    expect((await registry('platform', 'remove', added.id)).code).toBe(0);
    const repinned = await registry('org', 'jurisdiction', orgId.toUpperCase(), 'us');
    expect([repinned.code, repinned.stdout]).toEqual([0, `organization ${orgId} pinned to us\n`]);
    expect(await orgColumn()).toEqual({ jurisdiction: 'us' });
    const unpinned = json<{ id: string; name: string; jurisdiction: null }>(
      await registry('org', 'jurisdiction', orgId, '--none', '--json'),
    );
    expect(unpinned).toMatchObject({ id: orgId, name: 'EU Org', jurisdiction: null });
    expect(await orgColumn()).toEqual({ jurisdiction: null });
    const pinnedText = await registry('org', 'jurisdiction', orgId, 'fedramp-high');
    expect(pinnedText.stdout).toBe(`organization ${orgId} pinned to fedramp-high\n`);
    expect((await registry('org', 'jurisdiction', orgId, '--none')).stdout).toBe(
      `organization ${orgId} pinned to no jurisdiction\n`,
    );
    expect((await registry('org', 'remove', orgId)).code).toBe(0);
    expect((await registry('org', 'remove', loose.id)).code).toBe(0);
  });

  it('registers a client with the scopes it may hold, changes them, and the edge grants exactly those', async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Scoped Org', '--json'));
    const reader = json<{ clientId: string; clientSecret: string; scopes: string[] }>(
      await registry('client', 'add', '--org', org.id, '--json'),
    );
    expect(reader.scopes).toEqual(['webapi']);
    const writer = json<{ clientId: string; clientSecret: string; scopes: string[] }>(
      await registry('client', 'add', '--org', org.id, '--scopes', 'webapi.write', '--json'),
    );
    expect(writer.scopes).toEqual(['webapi', 'webapi.write']);
    const bad = await registry('client', 'add', '--org', org.id, '--scopes', 'webapi,root');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--scopes: unknown scope root: the scopes are webapi, webapi.write, webapi.admin, webapi.audit, webapi.webhooks',
    );

    const changed = await registry('client', 'scopes', reader.clientId, 'webapi.admin,webapi.write');
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain(`client ${reader.clientId} may hold webapi webapi.write webapi.admin`);
    expect((await registry('client', 'scopes', reader.clientId)).code).toBe(2);
    expect((await registry('client', 'scopes', 'nobody', 'webapi')).code).toBe(1);
    expect((await registry('client', 'list', '--org', org.id)).stdout).toMatch(
      new RegExp(`${writer.clientId}.*enabled\\s+webapi webapi.write\\s`),
    );

    const grant = async (c: { clientId: string; clientSecret: string }) =>
      ((await (await token(c.clientId, c.clientSecret)).json()) as { scope: string }).scope;
    expect(await grant(reader)).toBe('webapi webapi.write webapi.admin');
    expect(await grant(writer)).toBe('webapi webapi.write');
  });

  it('registers a client with allowed networks, replaces and clears them, and the edge holds it to them', async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Networked Org', '--json'));
    const added = await registry('client', 'add', '--org', org.id, '--networks', '203.0.113.7, 2001:DB8::/32');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('  networks       203.0.113.7/32 2001:db8::/32\n');
    const clientId = /client_id\s+(\S+)/.exec(added.stdout)![1];
    const secret = /client_secret\s+(\S+)/.exec(added.stdout)![1];
    const bad = await registry('client', 'add', '--org', org.id, '--networks', '203.0.113.5/24');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--networks: 203.0.113.5/24 has bits set past its /24 prefix: the network is 203.0.113.0/24',
    );

    // The local edge's socket names no source address: a client with networks gets no token there.
    const refused = await token(clientId, secret);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'unauthorized_client' });

    const set = await registry('client', 'networks', clientId, '10.0.0.0/8', '192.0.2.0/24', '--json');
    expect(json<{ allowedNetworks: string[] }>(set).allowedNetworks).toEqual(['10.0.0.0/8', '192.0.2.0/24']);
    expect((await registry('client', 'list', '--org', org.id)).stdout).toMatch(
      new RegExp(`${clientId}.*webapi\\s+10\\.0\\.0\\.0/8 192\\.0\\.2\\.0/24\\s`),
    );
    expect((await registry('client', 'networks', clientId, 'office.example')).stderr).toContain(
      'NETWORKS: office.example is not an IP address or a network in CIDR notation',
    );
    expect((await registry('client', 'networks', clientId)).code).toBe(2);
    expect((await registry('client', 'networks', clientId, '10.0.0.0/8', '--any')).code).toBe(2);
    expect((await registry('client', 'networks', 'nobody', '--any')).code).toBe(1);

    const cleared = await registry('client', 'networks', clientId, '--any');
    expect(cleared.stdout).toBe(`client ${clientId} may be used from any source\n`);
    expect((await token(clientId, secret)).status).toBe(200);
  });

  it('registers a webhook endpoint with its secret shown once, lists, disables, enables and removes it', async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Hooked Org', '--json'));
    const platform = json<{ id: string }>(
      await registry('platform', 'add', '--org', org.id, '--type', 'PF4', '--name', 'Hooked PF4', '--json'),
    ).id;
    const added = await registry(
      'webhook',
      'add',
      '--org',
      org.id,
      '--url',
      'http://127.0.0.1:9/hooks',
      '--events',
      'trade.closed, account.created',
      '--platforms',
      platform,
      '--description',
      'CRM',
    );
    expect(added.code).toBe(0);
    const id = /^ {2}id\s+(\S+)$/m.exec(added.stdout)![1];
    const secret = /^ {2}secret\s+(whsec_\S+)$/m.exec(added.stdout)![1];
    expect(added.stdout).toContain('  events   account.created trade.closed\n');
    expect(added.stdout).toContain(`  hears    ${platform}\n`);
    expect(added.stdout).toContain('shown only this once');
    // Stored for signing, answered nowhere else.
    const listed = await registry('webhook', 'list', '--org', org.id);
    expect(listed.stdout).toMatch(
      new RegExp(`${id}\\s+${org.id}\\s+http://127\\.0\\.0\\.1:9/hooks\\s+enabled\\s+account\\.created trade\\.closed`),
    );
    expect(listed.stdout).not.toContain(secret);
    expect((await registry('webhook', 'list', '--json')).stdout).not.toContain(secret);

    const all = await registry(
      'webhook',
      'add',
      '--org',
      org.id,
      '--url',
      'https://hooks.example.com/in',
      '--events',
      'all',
      '--json',
    );
    expect(json<{ eventTypes: string[]; platforms: null }>(all)).toMatchObject({ platforms: null });
    expect(json<{ eventTypes: string[] }>(all).eventTypes).toHaveLength(18);

    expect((await registry('webhook', 'disable', id)).stdout).toBe(`webhook endpoint ${id} disabled\n`);
    expect((await registry('webhook', 'list', '--org', org.id)).stdout).toContain('disabled: disabled by a caller');
    expect((await registry('webhook', 'enable', id)).stdout).toBe(`webhook endpoint ${id} enabled\n`);

    const badType = await registry(
      'webhook',
      'add',
      '--org',
      org.id,
      '--url',
      'http://127.0.0.1:9/',
      '--events',
      'trade.opend',
    );
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('--events: trade.opend is not an event type');
    const badUrl = await registry('webhook', 'add', '--org', org.id, '--url', 'ftp://127.0.0.1/', '--events', 'all');
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('url must be http or https');
    const foreign = await registry(
      'webhook',
      'add',
      '--org',
      org.id,
      '--url',
      'http://127.0.0.1:9/',
      '--events',
      'all',
      '--platforms',
      randomUUID(),
    );
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('not found');
    // An organization with endpoints is not removed until they are.
    expect((await registry('org', 'remove', org.id)).stderr).toContain('2 webhook endpoint(s)');

    expect((await registry('webhook', 'remove', id)).stdout).toBe(`webhook endpoint ${id} removed\n`);
    expect((await registry('webhook', 'remove', id)).code).toBe(1);
  });

  it("records each change it makes, refused ones too, and the organization's trail holds them for its audit clients", async () => {
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Audited Org', '--json'));
    const auditor = json<{ clientId: string; clientSecret: string }>(
      await registry('client', 'add', '--org', org.id, '--scopes', 'webapi.audit', '--json'),
    );
    const platform = json<{ id: string }>(
      await registry('platform', 'add', '--org', org.id, '--type', 'PF4', '--name', 'Audited PF4', '--json'),
    ).id;
    expect((await registry('platform', 'home', platform, 'apac')).code).toBe(0);
    // Refused: the reserved client id, and a client that does not exist (it belongs to no organization).
    const reserved = await registry('client', 'add', '--org', org.id, '--id', 'registry-cli');
    expect(reserved.code).toBe(1);
    expect(reserved.stderr).toContain("client id registry-cli is the registry CLI's in the audit trail");
    const nobody = `nobody-${randomUUID()}`;
    expect((await registry('client', 'scopes', nobody, 'webapi')).code).toBe(1);
    expect((await registry('platform', 'remove', platform)).code).toBe(0);
    // Bad usage reaches no registry: no row.
    expect((await registry('platform', 'home', platform, 'mars')).code).toBe(2);

    type Row = {
      operation: string;
      outcome: string;
      code: string | null;
      organizationId: string | null;
      platform: string | null;
      args: string;
      operator: string;
      forwardedAt: string | null;
    };
    const expected = [
      ['cli.org.add', 'applied', null, null],
      ['cli.client.add', 'applied', null, null],
      ['cli.platform.add', 'applied', null, platform],
      ['cli.platform.home', 'applied', null, platform],
      ['cli.client.add', 'refused', 'Validation', null],
      ['cli.platform.remove', 'applied', null, platform],
    ];
    const mine = json<Row[]>(await registry('audit', 'list', '--org', org.id, '--json'));
    expect(mine.map((r) => [r.operation, r.outcome, r.code, r.platform])).toStrictEqual([...expected].reverse());
    expect(mine.every((r) => r.organizationId === org.id && r.forwardedAt === null)).toBe(true);
    expect(mine.at(-1)!.operator).toMatch(/^.+@.+$/);
    expect(JSON.parse(mine.find((r) => r.operation === 'cli.platform.home')!.args)).toStrictEqual({
      flags: {},
      arguments: [platform, 'apac'],
    });
    // The refusal about a client of no organization is the operator's record only.
    const all = json<Row[]>(await registry('audit', 'list', '--limit', '1000', '--json'));
    const orphan = all.find((r) => r.operation === 'cli.client.scopes' && r.args.includes(nobody))!;
    expect(orphan).toMatchObject({ outcome: 'refused', code: 'NotFound', organizationId: null });
    expect((await registry('audit', 'list', '--limit', '0')).stderr).toContain('--limit must be a whole number');

    // The organization's audit client reads them in its trail (forwarded as it reads), each once, and in the export.
    const read = await asAuditor(auditor);
    type Event = { clientId: string; operation: string; outcome: string; code: string | null; platform: string | null };
    for (let pass = 0; pass < 2; pass++) {
      const page = (await (await read('/api/AuditEvents?clientId=registry-cli')).json()) as { events: Event[] };
      expect(page.events.map((e) => [e.operation, e.outcome, e.code, e.platform])).toStrictEqual(expected);
      expect(page.events.every((e) => e.clientId === 'registry-cli')).toBe(true);
    }
    const csv = await (await read('/api/AuditEvents/Export?operation=cli.platform.remove')).text();
    expect(csv.trim().split('\r\n')).toHaveLength(2);
    expect(csv).toContain(`registry-cli,,cli.platform.remove,${platform},`);
    expect(csv).not.toContain(auditor.clientSecret);
    const forwarded = json<Row[]>(await registry('audit', 'list', '--org', org.id, '--json'));
    expect(forwarded.every((r) => r.forwardedAt !== null)).toBe(true);
    expect((await registry('audit', 'list', '--org', org.id)).stdout).toMatch(/cli\.platform\.remove\s+applied\s/);

    // The minute's cron forwards what no read asked for.
    const later = json<{ id: string }>(await registry('org', 'add', '--name', 'Audited Later', '--json'));
    expect(json<Row[]>(await registry('audit', 'list', '--org', later.id, '--json'))[0].forwardedAt).toBeNull();
    const worker = await edge.miniflare.getWorker(EDGE_WORKER);
    await worker.scheduled({ cron: '* * * * *' });
    await until(
      async () => json<Row[]>(await registry('audit', 'list', '--org', later.id, '--json'))[0].forwardedAt,
      'the cron forwarding the row',
    );
  });

  it("keeps a change whose audit row cannot be completed, with a warning, and sends an organization's rows where its trail is read", async () => {
    const real = store.db;
    // A registry whose audit rows can be written but not completed (D1 lost between the two statements).
    const failing: RegistryRunner = (run) =>
      run(
        new RegistryStore({
          prepare: (sql: string) =>
            sql.startsWith('UPDATE operator_audit')
              ? ({
                  bind: () => ({ run: () => Promise.reject(new Error('D1 unreachable')) }),
                } as unknown as ReturnType<typeof real.prepare>)
              : real.prepare(sql),
          batch: (statements) => real.batch(statements),
        }),
      );
    const org = json<{ id: string }>(await registry('org', 'add', '--name', 'Moving Org', '--json'));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ['client', 'add', '--org', org.id, '--scopes', 'webapi.audit', '--json'],
      { out: (l) => out.push(l), err: (l) => err.push(l) },
      { env: environment(), registry: failing },
    );
    expect(code).toBe(0);
    const auditor = JSON.parse(out[0]) as { clientId: string; clientSecret: string };
    expect(auditor.clientSecret).toMatch(/\S{20,}/);
    expect(err.join('\n')).toContain(
      'warning: the audit row of this change is left unknown: it could not be completed (Error: D1 unreachable)',
    );

    // Pinned to the EU after these rows were written: every row goes to the trail the organization reads now.
    expect((await registry('org', 'jurisdiction', org.id, 'eu')).code).toBe(0);
    const rows = json<Array<{ operation: string; outcome: string; jurisdiction: string | null }>>(
      await registry('audit', 'list', '--org', org.id, '--json'),
    );
    expect(rows.map((r) => [r.operation, r.outcome, r.jurisdiction])).toStrictEqual([
      ['cli.org.jurisdiction', 'applied', 'eu'],
      ['cli.client.add', 'unknown', null],
      ['cli.org.add', 'applied', null],
    ]);
    const read = await asAuditor(auditor);
    const page = (await (await read('/api/AuditEvents?clientId=registry-cli')).json()) as {
      events: Array<{ operation: string; outcome: string }>;
    };
    // The unknown row waits for its cut-off (10 minutes) before it is forwarded as unknown.
    expect(page.events.map((e) => [e.operation, e.outcome])).toStrictEqual([
      ['cli.org.add', 'applied'],
      ['cli.org.jurisdiction', 'applied'],
    ]);
  });
});
