/**
 * The simulator's one listening socket: WebSocket upgrades at `/<server>` become manager sessions of that trading
 * server, `/control/...` is the fault control channel, `/healthz` says the process is alive. Peers are judged by the
 * address their connection comes from: loopback (127.0.0.1, ::1) always, and the addresses and ranges of `allow`
 * (SIM_MANAGER_ALLOW); anyone else is refused before its request is served. The fault controls answer loopback, or an
 * allowed peer that presents `Authorization: Bearer <controlToken>` when a token is configured (SIM_CONTROL_TOKEN).
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { BlockList } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { unmapIpv4, type AddressRange } from '../../shared/addressRanges.js';
import { handleControl, reply } from '../control/controlRoutes.js';
import type { Logger, TradingServer } from '../server/tradingServer.js';
import { ManagerSession } from './managerSession.js';

/** Large enough for a UserRecordsRequest with a long login list. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK.has(address);
}

export interface PeerPolicy {
  /** Peers besides loopback that may open manager sessions and read /healthz. Default: none. */
  allow?: readonly AddressRange[];
  /** Unset: the fault controls answer loopback peers only. */
  controlToken?: string;
}

/** Whether `address` is loopback or inside one of `ranges`. */
export function peerFilter(ranges: readonly AddressRange[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const range of ranges) list.addSubnet(range.address, range.prefix, range.family);
  return (address) => {
    if (address === undefined) return false;
    if (isLoopback(address)) return true;
    const plain = unmapIpv4(address);
    return list.check(plain, plain.includes(':') ? 'ipv6' : 'ipv4');
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function createManagerServer(servers: ReadonlyMap<string, TradingServer>, log: Logger, policy: PeerPolicy = {}): Server {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  const allowed = peerFilter(policy.allow ?? []);
  const tokenDigest = policy.controlToken === undefined ? null : digest(policy.controlToken);

  /** Loopback, or the configured token as a bearer token (compared in constant time). */
  const controlRefusal = (req: IncomingMessage): [number, string] | null => {
    if (isLoopback(req.socket.remoteAddress)) return null;
    if (tokenDigest === null) return [403, 'the fault controls answer loopback only (SIM_CONTROL_TOKEN unset)'];
    const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (presented !== undefined && timingSafeEqual(digest(presented), tokenDigest)) return null;
    return [401, 'the fault controls need Authorization: Bearer <SIM_CONTROL_TOKEN> from this address'];
  };

  const http = createServer((req, res) => {
    if (!allowed(req.socket.remoteAddress)) return reply(res, 403, { error: 'address not allowed (loopback and SIM_MANAGER_ALLOW only)' });
    const path = pathOf(req);
    if (path[0] === 'control') {
      const refusal = controlRefusal(req);
      if (refusal) {
        log({ msg: 'control request refused', peer: req.socket.remoteAddress, status: refusal[0] });
        return reply(res, refusal[0], { error: refusal[1] });
      }
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
    if (!allowed(req.socket.remoteAddress)) {
      log({ msg: 'manager connection refused: address not allowed', peer: req.socket.remoteAddress });
      return refuse(socket, 403, 'Forbidden');
    }
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
