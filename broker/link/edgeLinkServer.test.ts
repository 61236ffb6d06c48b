/**
 * The edge link server in-process, on a 127.0.0.1 HTTP server of the test's own: the secret checked before the upgrade
 * (401, no socket), the hello frame, malformed frames answered or the link closed, well-formed calls dispatched, the
 * replication frames routed, the heartbeat closing a link that stopped answering pings, and close ending every link.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { LogFields, Logger, LogLevel } from '../observability/log.js';
import type { BrokerMetrics } from '../observability/metrics.js';
import type { PlatformSet } from '../platforms/platformSet.js';
import { CallDispatcher, PLATFORM_NOT_SERVED } from './callDispatcher.js';
import { BROKER_VERSION, EdgeLinkServer } from './edgeLinkServer.js';

const SECRET = 'edge-link-test-secret';

interface Running {
  server: Server;
  links: EdgeLinkServer;
  port: number;
  counts: { opened: number; refused: number };
  logged: Array<{ level: LogLevel; fields: LogFields }>;
}
const started: Running[] = [];
const clients: WebSocket[] = [];

async function start(heartbeatMs = 60_000): Promise<Running> {
  const logged: Running['logged'] = [];
  const log = ((level: LogLevel, fields: LogFields) => {
    logged.push({ level, fields });
  }) as Logger;
  const platforms = { get: () => undefined } as unknown as PlatformSet;
  const metrics = { observe: () => {} } as unknown as BrokerMetrics;
  const counts = { opened: 0, refused: 0 };
  const links = new EdgeLinkServer(SECRET, new CallDispatcher(platforms, metrics, log), log, 'broker-7', heartbeatMs, {
    opened: () => {
      counts.opened++;
    },
    refused: () => {
      counts.refused++;
    },
  });
  const server = createServer();
  server.on('upgrade', (req, socket, head) => links.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const running = { server, links, port: (server.address() as AddressInfo).port, counts, logged };
  started.push(running);
  return running;
}

/** Opens a link and resolves with it and its first frame (the hello). */
function open(
  port: number,
  authorization: string,
  options: WebSocket.ClientOptions = {},
): Promise<{ ws: WebSocket; frames: unknown[]; hello: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/link`, { headers: { authorization }, ...options });
    clients.push(ws);
    const frames: unknown[] = [];
    ws.on('message', (data) => {
      frames.push(JSON.parse((data as Buffer).toString()));
      if (frames.length === 1) resolve({ ws, frames, hello: frames[0] });
    });
    ws.once('error', reject);
  });
}

async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

afterEach(async () => {
  for (const ws of clients.splice(0)) ws.terminate();
  for (const r of started.splice(0)) {
    r.links.close();
    await new Promise((resolve) => r.server.close(resolve));
  }
});

describe('the edge link server', () => {
  it('refuses a missing or wrong secret with 401 before any upgrade', async () => {
    const r = await start();
    for (const authorization of [undefined, `Bearer ${SECRET}x`, SECRET]) {
      const status = await new Promise<{ code: number | undefined; auth: string | undefined }>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port: r.port,
          path: '/link',
          headers: {
            connection: 'Upgrade',
            upgrade: 'websocket',
            'sec-websocket-version': '13',
            'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
            ...(authorization ? { authorization } : {}),
          },
        });
        req.on('response', (res) => {
          resolve({ code: res.statusCode, auth: res.headers['www-authenticate'] });
          res.resume();
        });
        req.on('upgrade', () => reject(new Error('upgraded')));
        req.on('error', reject);
        req.end();
      });
      expect(status).toStrictEqual({ code: 401, auth: 'Bearer' });
    }
    expect(r.counts).toStrictEqual({ opened: 0, refused: 3 });
    expect(r.links.linkCount).toBe(0);
    expect(r.logged.filter((l) => l.fields.msg === 'edge link refused: bad credentials')).toHaveLength(3);
  });

  it('opens a link with the right secret and greets it with the broker id and version', async () => {
    const r = await start();
    const { hello } = await open(r.port, `Bearer ${SECRET}`);
    expect(hello).toStrictEqual({ hello: { broker: 'broker-7', version: BROKER_VERSION } });
    expect(r.counts).toStrictEqual({ opened: 1, refused: 0 });
    expect(r.links.linkCount).toBe(1);
  });

  it('answers a call frame of the wrong shape with what is wrong, under its id', async () => {
    const r = await start();
    const { ws, frames } = await open(r.port, `Bearer ${SECRET}`);
    const base = { platform: 'p', op: 'ServerTime', args: {}, timeoutMs: 1000 };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...base, platform: 5 }, 'platform must be a string'],
      [{ ...base, op: null }, 'op must be a string'],
      [{ ...base, args: [] }, 'args must be an object'],
      [{ ...base, args: null }, 'args must be an object'],
      [{ ...base, args: 'x' }, 'args must be an object'],
      [{ ...base, timeoutMs: 0 }, 'timeoutMs must be a positive number'],
      [{ ...base, timeoutMs: '5' }, 'timeoutMs must be a positive number'],
      [{ ...base, traceId: 5 }, 'traceId must be a string'],
      [{ ...base, callId: '' }, 'callId must be a string of 1 to 200 characters'],
      [{ ...base, callId: 'x'.repeat(201) }, 'callId must be a string of 1 to 200 characters'],
      [{ ...base, callId: 12 }, 'callId must be a string of 1 to 200 characters'],
    ];
    bad.forEach(([frame], i) => ws.send(JSON.stringify({ ...frame, id: i + 1 })));
    await until(() => frames.length === 1 + bad.length);
    expect(frames.slice(1)).toStrictEqual(
      bad.map(([, problem], i) => ({
        id: i + 1,
        ok: false,
        error: { code: 'Internal', managerCode: null, message: `malformed call frame: ${problem}` },
      })),
    );
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });

  it('dispatches a well-formed call, binary frames and the longest call id included', async () => {
    const r = await start();
    const { ws, frames } = await open(r.port, `Bearer ${SECRET}`);
    ws.send(
      JSON.stringify({
        id: 1,
        platform: 'p',
        op: 'ServerTime',
        timeoutMs: 1000,
        traceId: 't',
        callId: 'x'.repeat(200),
      }),
    );
    ws.send(Buffer.from(JSON.stringify({ id: 2, platform: 'p', op: 'ServerTime', args: {}, timeoutMs: 1000 })), {
      binary: true,
    });
    await until(() => frames.length === 3);
    const notServed = { code: 'NotFound', managerCode: null, message: PLATFORM_NOT_SERVED };
    expect(frames.slice(1)).toStrictEqual([
      { id: 1, ok: false, error: notServed },
      { id: 2, ok: false, error: notServed },
    ]);
  });

  it("routes #replicate frames to the link's replications", async () => {
    const r = await start();
    const { ws, frames } = await open(r.port, `Bearer ${SECRET}`);
    ws.send(JSON.stringify({ id: 1, platform: 'p', op: '#replicate', args: { rep: 1 }, timeoutMs: 1000 }));
    ws.send(JSON.stringify({ id: 2, platform: 'p', op: '#replicate', args: { rep: 1, maxRows: 5 }, timeoutMs: 1000 }));
    await until(() => frames.length === 3);
    expect(frames.slice(1)).toStrictEqual([
      {
        id: 1,
        ok: false,
        error: {
          code: 'Internal',
          managerCode: null,
          message:
            'malformed call frame: #replicate needs an integer rep and maxRows, and a window of at least 1 if any',
        },
      },
      {
        id: 2,
        ok: false,
        error: { code: 'NotFound', managerCode: null, message: 'trade platform not served by this broker' },
      },
    ]);
  });

  it('closes a link that sends a frame it cannot read', async () => {
    const r = await start();
    for (const text of ['not json', '[1]', 'null', '{"id":"1","op":"x"}']) {
      const { ws } = await open(r.port, `Bearer ${SECRET}`);
      const closed = new Promise<[number, string]>((resolve) =>
        ws.once('close', (code, reason) => resolve([code, reason.toString()])),
      );
      ws.send(text);
      expect(await closed).toStrictEqual([1007, 'malformed frame']);
    }
    expect(r.logged.filter((l) => l.fields.msg === 'edge link closed: unreadable frame')).toHaveLength(4);
  });

  it('closes a link that stopped answering pings, and keeps one that answers', async () => {
    const r = await start(40);
    const answering = await open(r.port, `Bearer ${SECRET}`);
    const silent = await open(r.port, `Bearer ${SECRET}`, { autoPong: false });
    let pings = 0;
    answering.ws.on('ping', () => {
      pings++;
    });
    const closed = new Promise<void>((resolve) => silent.ws.once('close', () => resolve()));
    await closed;
    await until(() => pings >= 3);
    expect(answering.ws.readyState).toBe(WebSocket.OPEN);
    expect(r.links.linkCount).toBe(1);
    expect(
      r.logged.some((l) => l.level === 'warn' && l.fields.msg === 'edge link closed: no answer to the heartbeat'),
    ).toBe(true);
  });

  it('ends every link on close', async () => {
    const r = await start();
    const { ws } = await open(r.port, `Bearer ${SECRET}`);
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    r.links.close();
    await closed;
    await until(() => r.links.linkCount === 0);
  });
});
