/**
 * The SignalR hub across a broker restart and across organizations, with the stock @microsoft/signalr client
 * (simulator, broker, edge in workerd): a connected client is told `OnConnectionStatus {connected: false}` when the
 * broker is killed, `{connected: true}` once it is back, and its tick subscription delivers again without the client
 * doing anything; a client of another organization is refused the demo organization's platform exactly like an
 * unknown one (404 on negotiate and on the WebSocket).
 */
import { randomUUID } from 'node:crypto';
import { HubConnectionBuilder, HttpTransportType, LogLevel, type HubConnection } from '@microsoft/signalr';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { hashSecret } from '../../shared/secrets.js';
import { eventually, stackForFile } from './support.js';

/** Quotes of one symbol come about four times a second (a tenth of that by default): the waits for ticks are short. */
const setup = stackForFile({ ticksPerSecond: 50 });
const open: HubConnection[] = [];

function hub(platform: string, token: string): HubConnection {
  const connection = new HubConnectionBuilder()
    .withUrl(`${setup.client.stack.edgeUrl}/hubs/pf4/v2?tradePlatform=${platform}`, {
      accessTokenFactory: () => token,
      transport: HttpTransportType.WebSockets,
    })
    .configureLogging(LogLevel.None)
    .build();
  open.push(connection);
  return connection;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.stop().catch(() => {})));
});

/** Registers another organization with an API client and returns that client's token. */
async function foreignToken(): Promise<string> {
  const c = setup.client;
  const db = await c.stack.edge.db();
  const org = randomUUID();
  const clientId = `other-${org.slice(0, 8)}`;
  const secret = 'other-org-secret';
  const h = await hashSecret(secret);
  const now = new Date().toISOString();
  await db.batch([
    db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(org, 'Other', now),
    db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, NULL, ?)',
      )
      .bind(randomUUID(), 'Other PF4', 'PF4', org, now),
    db
      .prepare(
        'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .bind(clientId, org, 'Other', h.hash, h.salt, h.iterations, now),
  ]);
  const res = await fetch(`${c.stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
      scope: 'webapi',
    }),
  });
  const body = (await res.json()) as { access_token?: string };
  expect(body.access_token, JSON.stringify(body)).toBeTruthy();
  return body.access_token!;
}

describe('SignalR hub across a broker restart', () => {
  it('pushes OnConnectionStatus false when the broker dies, true when it is back, and ticks flow again', async () => {
    const c = setup.client;
    const connection = hub(c.stack.platforms.pf4, c.token);
    const statuses: boolean[] = [];
    const ticks: Array<{ symbol: string }> = [];
    connection.on('OnConnectionStatus', (s: { connected: boolean }) => statuses.push(s.connected));
    connection.on('OnTick', (t: { symbol: string }) => ticks.push(t));
    await connection.start();
    expect(await eventually(() => Promise.resolve(statuses.at(-1) === true), 15_000)).toBe(true);
    await connection.invoke('SubscribeToTicks', 'EURUSD');
    expect(await eventually(() => Promise.resolve(ticks.length >= 1), 15_000)).toBe(true);

    const exited = new Promise((resolve) => c.stack.broker.child.once('exit', resolve));
    c.stack.broker.child.kill('SIGKILL');
    await exited;
    expect(await eventually(() => Promise.resolve(statuses.at(-1) === false), 15_000)).toBe(true);

    await c.stack.restartBroker();
    const falseAt = statuses.lastIndexOf(false);
    expect(await eventually(() => Promise.resolve(statuses.slice(falseAt).includes(true)), 30_000)).toBe(true);
    const ticksAtBack = ticks.length;
    expect(await eventually(() => Promise.resolve(ticks.length > ticksAtBack), 15_000)).toBe(true);
    expect(ticks.slice(ticksAtBack).every((t) => t.symbol === 'EURUSD')).toBe(true);
    expect(connection.state).toBe('Connected');
  }, 90_000);
});

describe('SignalR hub and another organization', () => {
  it("refuses another organization's platform exactly like an unknown one", async () => {
    const c = setup.client;
    const other = await foreignToken();
    const theirs = hub(c.stack.platforms.pf4, other);
    await expect(theirs.start()).rejects.toThrow(/404/);
    const unknown = hub(randomUUID(), other);
    await expect(unknown.start()).rejects.toThrow(/404/);

    const negotiate = (platform: string) =>
      fetch(`${c.stack.edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${platform}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other}` },
      });
    const [a, b] = await Promise.all([negotiate(c.stack.platforms.pf4), negotiate(randomUUID())]);
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    const bodyA = (await a.text()).replaceAll(c.stack.platforms.pf4, 'X');
    const bodyB = (await b.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'X');
    expect(bodyA).toBe(bodyB);

    const ws = new WebSocket(
      `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${c.stack.platforms.pf4}&access_token=${other}`,
    );
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => resolve(-1));
    });
    ws.on('error', () => {}); // terminating a refused, unopened socket reports an error: expected
    ws.terminate();
    expect(status).toBe(404);

    // The demo organization's own client still connects to it.
    const own = hub(c.stack.platforms.pf4, c.token);
    await own.start();
    expect(own.state).toBe('Connected');
  });
});
