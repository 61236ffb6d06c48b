/**
 * The attack drill's stream clients (bench/attack/watchers.ts): SSE text split into events, hub frames into records,
 * and both clients against servers of the test's own on 127.0.0.1, noting what came and when each stream ended.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { freePort } from './http.js';
import { hubRecords, HubWatch, SseParser, SseWatch } from './watchers.js';
import { until } from './waiting.js';

describe('SSE text', () => {
  it('gives each event once its blank line came, in whatever pieces the text arrives', () => {
    const parser = new SseParser();
    expect(parser.push('event: tick\ndata: {"a"')).toStrictEqual([]);
    expect(parser.push(':1}\n\r\ndata: one\r\ndata:  two\n')).toStrictEqual([{ event: 'tick', data: '{"a":1}' }]);
    expect(parser.push('\nevent: closed\nid: 7\n: a comment\ndata: {"code":"TokenExpired"}\n\n')).toStrictEqual([
      { event: 'message', data: 'one\n two' },
      { event: 'closed', data: '{"code":"TokenExpired"}' },
    ]);
  });

  it('gives no event for an event without data', () => {
    const parser = new SseParser();
    expect(parser.push('event: ping\n\n: keep-alive\n\n')).toStrictEqual([]);
    expect(parser.push('data: after\n\n')).toStrictEqual([{ event: 'message', data: 'after' }]);
  });
});

describe('hub frames', () => {
  it('splits a frame into its records', () => {
    expect(hubRecords('{}\u001e{"type":6}\u001e{"type":1,"target":"OnTick","arguments":[1]}\u001e')).toStrictEqual([
      {},
      { type: 6 },
      { type: 1, target: 'OnTick', arguments: [1] },
    ]);
    expect(hubRecords('')).toStrictEqual([]);
  });
});

describe('stream clients on 127.0.0.1', () => {
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
  });
  const listening = async (server: Server) => {
    const port = await freePort();
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    closing.push(
      () =>
        new Promise((done) => {
          server.closeAllConnections();
          server.close(done);
        }),
    );
    return `http://127.0.0.1:${port}`;
  };

  it('notes SSE events with their times, and when the stream ended', async () => {
    let stream: ServerResponse | undefined;
    const base = await listening(
      createServer((req, res) => {
        if (req.headers.authorization !== 'Bearer tok' || req.headers.accept !== 'text/event-stream')
          return void res.writeHead(401).end('no');
        stream = res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
      }),
    );
    const refused = await SseWatch.open(`${base}/s`, 'other');
    expect(refused.status).toBe(401);
    expect(refused.endedAt).not.toBeNull();

    const watch = await SseWatch.open(`${base}/s`, 'tok');
    expect(watch.status).toBe(200);
    expect(await until(() => watch.events.length === 1, 5000)).toBe(true);
    expect(watch.endedAt).toBeNull();
    const before = Date.now();
    stream!.end('event: closed\ndata: {"code":"ClientRevoked"}\n\n');
    expect(await until(() => watch.endedAt !== null, 5000)).toBe(true);
    expect(watch.events.map((e) => e.value)).toStrictEqual([
      { event: 'message', data: '1' },
      { event: 'closed', data: '{"code":"ClientRevoked"}' },
    ]);
    expect(watch.closedEvent()!.at).toBeGreaterThanOrEqual(before);
    expect(watch.endedAt!).toBeGreaterThanOrEqual(watch.closedEvent()!.at);
  });

  it("negotiates, shakes hands, answers the hub's invocations, and notes the close", async () => {
    const http = createServer((req, res) => {
      if (
        req.method === 'POST' &&
        req.url === '/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=p1' &&
        req.headers.authorization === 'Bearer tok'
      ) {
        return void res.end('{}');
      }
      res.writeHead(401).end();
    });
    const hubs = new WebSocketServer({ server: http });
    const sockets: Array<{ socket: ServerSocket; url?: string; got: string[] }> = [];
    hubs.on('connection', (socket, req) => {
      const peer = { socket, url: req.url, got: [] as string[] };
      sockets.push(peer);
      socket.on('message', (d) => {
        const text = (d as Buffer).toString();
        peer.got.push(text);
        if (text === '{"protocol":"json","version":1}\u001e') socket.send('{}\u001e');
      });
    });
    closing.push(
      () =>
        new Promise((done) => {
          for (const client of hubs.clients) client.terminate();
          hubs.close(done);
        }),
    );
    const base = await listening(http);

    await expect(HubWatch.open(base, 'other', { handshake: true, platform: 'p1' })).rejects.toThrow(
      'hub negotiate answered 401',
    );
    const silent = await HubWatch.open(base, 'tok', { handshake: false, platform: 'p1' });
    const hub = await HubWatch.open(base, 'tok', { handshake: true, platform: 'p1' });
    expect(sockets.map((s) => s.url)).toStrictEqual([
      '/hubs/pf4/v2?tradePlatform=p1&access_token=tok',
      '/hubs/pf4/v2?tradePlatform=p1&access_token=tok',
    ]);
    expect(sockets[0].got).toStrictEqual([]);
    const [, server] = sockets;

    server.socket.send(
      '{"type":1,"target":"OnTick","arguments":[{"symbol":"EURUSD"}]}\u001e{"type":1,"invocationId":"9","target":"Probe"}\u001e',
    );
    server.socket.send(
      '{"type":3,"invocationId":"s1","result":null}\u001e{"type":2,"invocationId":"all","item":{}}\u001e',
    );
    expect(await until(() => server.got.length === 2, 5000)).toBe(true);
    expect(server.got[1]).toBe('{"type":3,"invocationId":"9","error":"no result"}\u001e');
    expect(await until(() => hub.received.length === 5, 5000)).toBe(true);
    expect(hub.ticks().map((t) => t.value.type)).toStrictEqual([1, 2]);
    expect(hub.completion('s1')).toStrictEqual({ type: 3, invocationId: 's1', result: null });
    expect(hub.completion('nothing')).toBeUndefined();
    expect(hub.closeMessage()).toBeUndefined();

    const cause = Date.now();
    server.socket.send('{"type":7,"error":"TokenExpired: the access token expired","allowReconnect":true}\u001e');
    server.socket.close(1000);
    expect(await until(() => hub.closedAt !== null, 5000)).toBe(true);
    expect(hub.closeMessage()!.value).toStrictEqual({
      type: 7,
      error: 'TokenExpired: the access token expired',
      allowReconnect: true,
    });
    expect(hub.closeFrameAt!).toBeGreaterThanOrEqual(cause);
    expect(hub.closeFrameAt!).toBeLessThanOrEqual(hub.closedAt!);
    expect(silent.closeFrameAt).toBeNull();
    silent.terminate();
    expect(await until(() => sockets[0].socket.readyState === sockets[0].socket.CLOSED, 5000)).toBe(true);
  });
});
