/**
 * What an operator and an orchestrator see of a broker: `/livez` and `/readyz` answering 200 while the trading server
 * is down (only `/healthz` reports it), `/readyz` only once its platforms are loaded and their sessions begun; process, reconnect, resync and link counters on
 * `/metrics`; TLS terminated in the broker (`wss://` links, a certificate made by openssl for the test); and log lines
 * written by pino with secret fields redacted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from './index.js';
import { readinessReport } from './observability/health.js';
import { jsonLineLogger, REDACTED } from './observability/log.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../test/support/broker/fakeManagerServer.js';
import { eventually, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'operability-link-secret';
const PLATFORM = '0b6f3a52-4a53-4c47-9d6f-5a1e2f0c00aa';
const FAST = { backoff: { baseMs: 20, capMs: 100 }, pingIntervalMs: 1000 };

/** A port nothing listens on (taken, then released). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** A metric's value from the exposition text, by name and an optional label fragment. */
function metric(text: string, name: string, labels = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(name) && (l[name.length] === ' ' || l[name.length] === '{') && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('probes and metrics', () => {
  let fake: FakeManagerServer;
  let broker: RunningBroker;
  const base = () => `http://127.0.0.1:${broker.port}`;

  beforeAll(async () => {
    fake = await FakeManagerServer.start('PF4');
    broker = await startBroker({
      secret: SECRET,
      session: FAST,
      platforms: [{ id: PLATFORM, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
    });
  });
  afterAll(async () => {
    await broker?.close();
    await fake?.close();
  });

  it('counts reconnects and resyncs of the manager session, and edge links opened, open and refused', async () => {
    await eventually(() => broker.platforms.get(PLATFORM)!.cache.resyncs >= 1 || undefined, 10_000);
    const before = await (await fetch(`${base()}/metrics`)).text();
    expect(metric(before, 'broker_manager_reconnects_total', PLATFORM)).toBe(0);
    expect(metric(before, 'broker_resyncs_total', PLATFORM)).toBe(1);
    expect(metric(before, 'broker_edge_links')).toBe(0);

    fake.drop();
    await eventually(() => broker.platforms.get(PLATFORM)!.cache.resyncs >= 2 || undefined, 10_000);
    const link = await TestLink.open(broker.port, SECRET);
    await expect(TestLink.open(broker.port, 'wrong-secret')).rejects.toThrow();
    const after = await (await fetch(`${base()}/metrics`)).text();
    expect(metric(after, 'broker_manager_reconnects_total', PLATFORM)).toBe(1);
    expect(metric(after, 'broker_resyncs_total', PLATFORM)).toBe(2);
    expect(metric(after, 'broker_edge_links')).toBe(1);
    expect(metric(after, 'broker_edge_links_opened_total')).toBe(1);
    expect(metric(after, 'broker_edge_links_refused_total')).toBe(1);
    await link.close();
  });

  it('serves the Node process metrics', async () => {
    const text = await (await fetch(`${base()}/metrics`)).text();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(metric(text, name), name).toBeGreaterThanOrEqual(0);
    }
  });

  it('stays live and ready while the trading server is down; only /healthz reports it', async () => {
    await fake.close();
    await eventually(async () => (await fetch(`${base()}/healthz`)).status === 503 || undefined, 10_000);
    expect((await fetch(`${base()}/livez`)).status).toBe(200);
    const ready = await fetch(`${base()}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toStrictEqual({ status: 'ready', links: 0, platforms: 1 });
  });
});

describe('readiness', () => {
  const session = (connectAttempts: number) => ({ session: { connectAttempts } });

  it('is ready once the platforms are loaded and every session has begun connecting, whatever the servers answer', () => {
    expect(readinessReport({ loaded: true, all: () => [session(1), session(3)] }, false, 2)).toStrictEqual({
      statusCode: 200,
      body: { status: 'ready', links: 2, platforms: 2 },
    });
    expect(readinessReport({ loaded: true, all: () => [] }, false, 0)).toStrictEqual({
      statusCode: 200,
      body: { status: 'ready', links: 0, platforms: 0 },
    });
  });

  it('is starting before the platforms are loaded or while a session has not begun its first connection', () => {
    expect(readinessReport({ loaded: false, all: () => [] }, false, 0)).toStrictEqual({
      statusCode: 503,
      body: { status: 'starting', links: 0, platforms: 0 },
    });
    expect(readinessReport({ loaded: true, all: () => [session(1), session(0)] }, false, 0)).toStrictEqual({
      statusCode: 503,
      body: { status: 'starting', links: 0, platforms: 2 },
    });
  });

  it('is stopping once the broker closes', () => {
    expect(readinessReport({ loaded: true, all: () => [session(1)] }, true, 0)).toStrictEqual({
      statusCode: 503,
      body: { status: 'stopping', links: 0, platforms: 1 },
    });
  });

  it('answers ready from its first request: platforms are loaded and sessions begun before the broker listens', async () => {
    const unreachable = `ws://127.0.0.1:${await closedPort()}/nowhere`;
    const broker = await startBroker({
      secret: SECRET,
      session: FAST,
      platforms: [{ id: PLATFORM, family: 'PF4', server: unreachable, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
    });
    try {
      const ready = await fetch(`http://127.0.0.1:${broker.port}/readyz`);
      expect([ready.status, await ready.json()]).toStrictEqual([200, { status: 'ready', links: 0, platforms: 1 }]);
      expect(broker.platforms.get(PLATFORM)!.session.connectAttempts).toBeGreaterThanOrEqual(1);
      expect((await fetch(`http://127.0.0.1:${broker.port}/healthz`)).status).toBe(503);
    } finally {
      await broker.close();
    }
  });
});

describe('TLS in the broker', () => {
  let dir: string;
  let broker: RunningBroker;
  let cert: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    broker = await startBroker({
      secret: SECRET,
      platforms: [],
      tls: { cert, key: readFileSync(join(dir, 'key.pem')) },
    });
  });
  afterAll(async () => {
    await broker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves its probes over HTTPS', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: broker.port, path: '/readyz', ca: cert }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
  });

  it('accepts wss:// edge links with the secret, and refuses a client that does not trust the certificate', async () => {
    const hello = await new Promise<unknown>((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${broker.port}/link`, {
        headers: { authorization: `Bearer ${SECRET}` },
        ca: cert,
      });
      ws.once('message', (data) => {
        resolve(JSON.parse((data as Buffer).toString()));
        ws.close();
      });
      ws.once('error', reject);
    });
    expect(hello).toMatchObject({ hello: { broker: 'local' } });
    const untrusted = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`wss://127.0.0.1:${broker.port}/link`, {
        headers: { authorization: `Bearer ${SECRET}` },
      });
      ws.once('open', () => {
        resolve('open');
        ws.close();
      });
      ws.once('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? error.message));
    });
    expect(untrusted).toMatch(/SELF_SIGNED|CERT/);
  });
});

describe('log lines', () => {
  it('are JSON written by pino, with level names, ISO times and secret fields redacted at any of three depths', () => {
    const lines: string[] = [];
    const log = jsonLineLogger('info', (line) => lines.push(line));
    log('debug', { msg: 'below the level' });
    log('info', { msg: 'platform served', platform: PLATFORM, password: 'pw-top' });
    log('warn', {
      msg: 'nested',
      config: { server: 'ws://x', password: 'pw-nested', secret: 'link-secret' },
      args: { login: 1, inner: { newPassword: 'pw-deep' } },
    });
    log('error', { msg: 'headers', headers: { authorization: 'Bearer token-value' }, token: 'bare-token' });
    expect(lines).toHaveLength(3);
    const text = lines.join('');
    for (const secret of ['pw-top', 'pw-nested', 'link-secret', 'pw-deep', 'token-value', 'bare-token'])
      expect(text).not.toContain(secret);
    const [served, nested, headers] = lines.map((l) => JSON.parse(l));
    expect(served).toMatchObject({ level: 'info', msg: 'platform served', platform: PLATFORM, password: REDACTED });
    expect(Number.isNaN(Date.parse(served.time))).toBe(false);
    expect(nested).toMatchObject({
      level: 'warn',
      config: { server: 'ws://x', password: REDACTED, secret: REDACTED },
      args: { login: 1, inner: { newPassword: REDACTED } },
    });
    expect(headers).toMatchObject({ level: 'error', headers: { authorization: REDACTED }, token: REDACTED });
  });
});
