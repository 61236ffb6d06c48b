/**
 * Long-lived streams re-check their caller (simulator, broker, edge in workerd, REGISTRY_CACHE_SECONDS 1 s): an SSE
 * stream and a hub socket end, with the reason, once their client is disabled, once their token expires (the hub
 * allowing a reconnect, the SSE stream telling why) and once their platform leaves the organization. The hub closes a
 * socket that never sends its handshake (within STREAM_HUB_HANDSHAKE_SECONDS, 2 s here), bounds the subscriptions of a socket with an error completion, and counts
 * negotiation and invocations in the client's API rate limit.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { hashSecret } from '../../shared/secrets.js';
import { SseReader } from '../support/sse.js';
import { tokenExpiringIn } from '../../launcher/stack.js';
import { eventually, stackForFile } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { streamObjectName } from '../../workers/streams/fanout.js';
import { LOCAL_HOME } from '../support/edge.js';

/** The API limit of this file's stack: each test's client has its own budget of it. */
const API_LIMIT = 400;
/** How long this file's hub sockets may take to send their handshake (15 s by default). */
const HANDSHAKE_SECONDS = 2;
// Quotes of one symbol about four times a second (a tenth of that by default): the waits for ticks are short.
// An hour's window, so that a test's budget does not start again halfway (windows are aligned to the clock).
const setup = stackForFile({
  ticksPerSecond: 50,
  edgeVars: {
    REGISTRY_CACHE_SECONDS: '1',
    API_RATE_LIMIT: String(API_LIMIT),
    RATE_LIMIT_WINDOW_SECONDS: '3600',
    STREAM_HUB_HANDSHAKE_SECONDS: String(HANDSHAKE_SECONDS),
    TOKEN_CLOCK_TOLERANCE_SECONDS: '0',
  },
});
const stack = () => setup.client.stack;

/** A client of the demo organization of its own, and a token for it from the token endpoint. */
async function newClient(): Promise<{ clientId: string; token: string }> {
  const clientId = `streams-${randomUUID().slice(0, 8)}`;
  const secret = randomUUID();
  const h = await hashSecret(secret);
  const db = await stack().edge.db();
  await db
    .prepare(
      'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(clientId, stack().organizationId, clientId, h.hash, h.salt, h.iterations, new Date().toISOString())
    .run();
  const res = await fetch(`${stack().edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  const body = (await res.json()) as { access_token: string };
  return { clientId, token: body.access_token };
}

const sseUrl = (platform = stack().platforms.pf4, family = 'PF4') =>
  `${stack().edgeUrl}/api/v2/${family}/${platform}/Stream?ticks`;
const setDisabled = async (clientId: string, disabled: boolean) =>
  (await stack().edge.db())
    .prepare('UPDATE api_clients SET disabled = ? WHERE client_id = ?')
    .bind(disabled ? 1 : 0, clientId)
    .run();

/** A raw hub socket: negotiate, connect, optionally handshake; every record it receives, and how it closed. */
async function rawHub(token: string, handshake = true) {
  const negotiate = await fetch(
    `${stack().edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${stack().platforms.pf4}`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    },
  );
  expect(negotiate.status).toBe(200);
  const ws = new WebSocket(
    `${stack().edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${stack().platforms.pf4}&access_token=${token}`,
  );
  const received: Array<Record<string, any>> = [];
  const closed: { code?: number } = {};
  ws.on('message', (d) => {
    for (const r of (d as Buffer).toString().split('\u001e').filter(Boolean)) {
      const m = JSON.parse(r);
      received.push(m);
      if (m.type === 1 && m.invocationId)
        ws.send(JSON.stringify({ type: 3, invocationId: m.invocationId, error: 'no result' }) + '\u001e');
    }
  });
  ws.on('close', (code) => {
    closed.code = code;
  });
  ws.on('error', () => {});
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const send = (m: object) => ws.send(JSON.stringify(m) + '\u001e');
  if (handshake) {
    send({ protocol: 'json', version: 1 });
    await eventually(() => Promise.resolve(received.length > 0), 10_000);
    expect(received[0]).toEqual({});
  }
  const completion = async (invocationId: string) => {
    await eventually(
      () => Promise.resolve(received.some((m) => m.type === 3 && m.invocationId === invocationId)),
      10_000,
    );
    return received.find((m) => m.type === 3 && m.invocationId === invocationId)!;
  };
  return { ws, received, closed, send, completion, closeMessage: () => received.find((m) => m.type === 7) };
}

describe('streams end with their caller', () => {
  it('ends an SSE stream and a hub socket within the cache time once the client is disabled, saying why', async () => {
    const { clientId, token } = await newClient();
    const sse = await SseReader.open(sseUrl(), token);
    const socket = await rawHub(token);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.of('ticks').length >= 1), 15_000);
      await setDisabled(clientId, true);
      expect(await eventually(() => Promise.resolve(sse.ended), 5_000)).toBe(true);
      expect(sse.events.at(-1)).toMatchObject({ event: 'closed' });
      expect(JSON.parse(sse.events.at(-1)!.data)).toEqual({
        code: 'ClientRevoked',
        message: 'the client is disabled or no longer registered',
      });
      expect(await eventually(() => Promise.resolve(socket.closed.code !== undefined), 5_000)).toBe(true);
      expect(socket.closeMessage()).toEqual({
        type: 7,
        error: 'ClientRevoked: the client is disabled or no longer registered',
        allowReconnect: false,
      });
      expect(socket.closed.code).toBe(1008);
      // Nothing after the close message.
      expect(socket.received.at(-1)).toEqual(socket.closeMessage());
      // A new stream is refused as the API is.
      const again = await SseReader.open(sseUrl(), token);
      expect(again.status).toBe(401);
    } finally {
      await setDisabled(clientId, false);
      await sse.close();
      socket.ws.terminate();
    }
  });

  it('ends both when the token expires, the hub inviting a reconnect with a new token', async () => {
    const token = await tokenExpiringIn(stack(), setup.client.token, 2);
    const sse = await SseReader.open(sseUrl(), token);
    const socket = await rawHub(token);
    try {
      expect(sse.status).toBe(200);
      // Ended at the first check after exp plus the clock tolerance (TOKEN_CLOCK_TOLERANCE_SECONDS, 0 here).
      expect(await eventually(() => Promise.resolve(sse.ended && socket.closed.code !== undefined), 20_000)).toBe(true);
      expect(JSON.parse(sse.events.at(-1)!.data)).toEqual({
        code: 'TokenExpired',
        message: 'the access token expired: reconnect with a new token',
      });
      expect(socket.closeMessage()).toEqual({
        type: 7,
        error: 'TokenExpired: the access token expired: reconnect with a new token',
        allowReconnect: true,
      });
    } finally {
      await sse.close();
      socket.ws.terminate();
    }
  });

  it('ends a stream whose platform moves to another organization', async () => {
    const { token } = await newClient();
    const db = await stack().edge.db();
    const otherOrg = randomUUID();
    await db
      .prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(otherOrg, 'Other', new Date().toISOString())
      .run();
    const sse = await SseReader.open(sseUrl(stack().platforms.pf5, 'PF5'), token);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.events.length >= 1), 10_000);
      await db
        .prepare('UPDATE trade_platforms SET organization_id = ? WHERE id = ?')
        .bind(otherOrg, stack().platforms.pf5)
        .run();
      expect(await eventually(() => Promise.resolve(sse.ended), 5_000)).toBe(true);
      expect(JSON.parse(sse.events.at(-1)!.data)).toEqual({
        code: 'PlatformRemoved',
        message: 'the trade platform is no longer registered to this organization',
      });
    } finally {
      await db
        .prepare('UPDATE trade_platforms SET organization_id = ? WHERE id = ?')
        .bind(stack().organizationId, stack().platforms.pf5)
        .run();
      await sse.close();
    }
  });
});

/** Hub sockets the PF4 platform's stream object holds, read through Miniflare. */
async function hubSockets(): Promise<number> {
  return (
    await objectCall<{ hubs: number }>(
      stack().edge.miniflare,
      'STREAMS',
      streamObjectName(stack().platforms.pf4, LOCAL_HOME.region, 0),
      'stats',
    )
  ).hubs;
}

describe('hub sockets are bounded', () => {
  it('closes a socket that sends no handshake within STREAM_HUB_HANDSHAKE_SECONDS', async () => {
    const { token } = await newClient();
    const socket = await rawHub(token, false);
    try {
      const before = await hubSockets();
      expect(before).toBeGreaterThanOrEqual(1);
      // The Close message, then the close frame (the client then answers it: CLOSING, and CLOSED once the transport
      // ends, which local workerd does some seconds later for a socket that never sent a message).
      expect(await eventually(() => Promise.resolve(socket.ws.readyState >= WebSocket.CLOSING), 20_000, 200)).toBe(
        true,
      );
      expect(socket.closeMessage()).toEqual({
        type: 7,
        error: `no handshake within ${HANDSHAKE_SECONDS} s`,
        allowReconnect: false,
      });
      expect(socket.received).toEqual([socket.closeMessage()]);
      expect(await eventually(async () => (await hubSockets()) === before - 1, 5_000)).toBe(true);
    } finally {
      socket.ws.terminate();
    }
  }, 30_000);

  it('answers a subscription past the bound with an error completion, and goes on answering', async () => {
    const { token } = await newClient();
    const socket = await rawHub(token);
    try {
      for (let i = 0; i < 256; i++)
        socket.send({ type: 1, invocationId: `s${i}`, target: 'SubscribeToTicks', arguments: [`SYM${i}`] });
      expect(await socket.completion('s255')).toEqual({ type: 3, invocationId: 's255', result: null });
      socket.send({ type: 1, invocationId: 'over', target: 'SubscribeToTicks', arguments: ['ONEMORE'] });
      expect((await socket.completion('over')).error).toBe(
        'SubscribeToTicks: at most 256 symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks',
      );
      // Subscribing again to a symbol already held is no new subscription; unsubscribing makes room.
      socket.send({ type: 1, invocationId: 'again', target: 'SubscribeToTicks', arguments: ['SYM3'] });
      expect(await socket.completion('again')).toEqual({ type: 3, invocationId: 'again', result: null });
      socket.send({ type: 1, invocationId: 'drop', target: 'UnsubscribeFromTicks', arguments: ['SYM0'] });
      socket.send({ type: 1, invocationId: 'room', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      expect(await socket.completion('room')).toEqual({ type: 3, invocationId: 'room', result: null });
      await eventually(
        () => Promise.resolve(socket.received.some((m) => m.target === 'OnTick' && m.arguments[0].symbol === 'EURUSD')),
        15_000,
      );
      for (let i = 0; i < 64; i++)
        socket.send({ type: 4, invocationId: `t${i}`, target: 'StreamTrades', arguments: [] });
      socket.send({ type: 4, invocationId: 't64', target: 'StreamTrades', arguments: [] });
      expect((await socket.completion('t64')).error).toBe(
        'StreamTrades: at most 64 open streams per connection: cancel one first',
      );
      expect(socket.closed.code).toBeUndefined();
    } finally {
      socket.ws.terminate();
    }
  });

  it("counts negotiation and invocations in the client's API rate limit", async () => {
    const { token } = await newClient();
    const socket = await rawHub(token); // one negotiation and one connection spent
    try {
      const sent = API_LIMIT + 50;
      for (let i = 0; i < sent; i++)
        socket.send({ type: 1, invocationId: `r${i}`, target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      await socket.completion(`r${sent - 1}`);
      const completions = socket.received.filter((m) => m.type === 3 && /^r\d+$/.test(m.invocationId));
      expect(completions.map((m) => m.invocationId)).toEqual(Array.from({ length: sent }, (_, i) => `r${i}`));
      const admitted = completions.filter((m) => !m.error).length;
      // Admitted until the window's budget is spent (less what the edge's isolate leased for the negotiation), then
      // refused, each refusal naming the wait.
      expect(admitted).toBeGreaterThan(API_LIMIT - API_LIMIT / 10);
      expect(admitted).toBeLessThanOrEqual(API_LIMIT - 2);
      expect(completions.slice(0, admitted).every((m) => m.result === null)).toBe(true);
      for (const m of completions.slice(admitted)) {
        expect(m.error).toMatch(
          new RegExp(`^rate limit: at most ${API_LIMIT} calls per 3600 s for this client; retry after \\d+ s$`),
        );
      }
      // The edge's isolate may still hold calls it leased before the window was spent (at most a twentieth of it).
      const lease = API_LIMIT / 20;
      const negotiations: Response[] = [];
      for (let i = 0; i <= lease && negotiations.at(-1)?.status !== 429; i++) {
        negotiations.push(
          await fetch(
            `${stack().edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${stack().platforms.pf4}`,
            {
              method: 'POST',
              headers: { authorization: `Bearer ${token}` },
            },
          ),
        );
      }
      expect(negotiations.at(-1)!.status).toBe(429);
      expect(Number(negotiations.at(-1)!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await negotiations.at(-1)!.json()) as { errorCode: string }).errorCode).toBe('TooManyRequests');
      const rest = await fetch(`${stack().edgeUrl}/api/v2/PF4/${stack().platforms.pf4}/ServerTime`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(rest.status).toBe(429);
    } finally {
      socket.ws.terminate();
    }
  });
});
