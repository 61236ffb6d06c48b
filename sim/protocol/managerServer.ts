/**
 * The simulator's one listening socket: WebSocket upgrades at `/<server>` become manager sessions of that trading
 * server, `/control/...` is the fault control channel, `/healthz` says the process is alive. Loopback peers only.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { handleControl, reply } from '../control/controlRoutes.js';
import type { Logger, TradingServer } from '../server/tradingServer.js';
import { ManagerSession } from './managerSession.js';

/** Large enough for a UserRecordsRequest with a long login list. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK.has(address);
}

export function createManagerServer(servers: ReadonlyMap<string, TradingServer>, log: Logger): Server {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });

  const http = createServer((req, res) => {
    if (!isLoopback(req.socket.remoteAddress)) return reply(res, 403, { error: 'loopback only' });
    const path = pathOf(req);
    if (path[0] === 'control') {
      handleControl(req, res, servers, path.slice(1)).catch((err: Error) => {
        log({ msg: 'control request failed', error: err.message });
        if (!res.headersSent) reply(res, 500, { error: 'control request failed' });
      });
      return;
    }
    if (path.length === 1 && path[0] === 'healthz') return reply(res, 200, { status: 'ok', servers: [...servers.keys()] });
    reply(res, 404, { error: 'not found' });
  });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!isLoopback(req.socket.remoteAddress)) return refuse(socket, 403, 'Forbidden');
    const path = pathOf(req);
    const server = path.length === 1 ? servers.get(path[0]) : undefined;
    if (!server) return refuse(socket, 404, 'Not Found');
    // During a restart window the server is not there at all, as a real restarting server would be.
    if (server.isDown()) return refuse(socket, 503, 'Service Unavailable');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const peer = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
      new ManagerSession(ws, server, peer, req.socket);
    });
  });

  http.on('close', () => wss.close());
  return http;
}

function pathOf(req: IncomingMessage): string[] {
  const url = new URL(req.url ?? '/', 'http://sim.invalid');
  return url.pathname.split('/').filter((p) => p.length > 0).map(decodeURIComponent);
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}
