/**
 * The listening socket of a bridge: WebSocket upgrades at `/<name>` become manager sessions of that bridged server;
 * every other HTTP request goes to the embedding process's own routes (`routes`), or is answered 404. With `tls`
 * (a certificate chain and its key, PEM) it is an HTTPS server and the sessions are `wss://`: the broker verifies
 * the certificate against the CAs Node trusts, and those of NODE_EXTRA_CA_CERTS.
 *
 * Peers are judged by the address their connection comes from before anything is served: loopback always, and the
 * addresses and ranges of `allow`; anyone else gets 403. An upgrade is refused with 404 for a path that names no
 * server (one path segment; the query string is ignored), and with 503 while the server is not available (a restart
 * window) or already has `limits.maxSessions` connections. The WebSocket server reads frames up to `maxPayload` (at
 * least SERVER_MIN_FRAME_BYTES; past it the `ws` library closes with 1009) and never compresses.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { AddressRange } from '../../shared/addressRanges.js';
import { SERVER_MIN_FRAME_BYTES } from '../../shared/protocol.js';
import type { BridgedServer } from './bridgedServer.js';
import type { BridgeLog } from './driver.js';
import { peerFilter } from './peers.js';

/** An HTTP request of the embedding process's own (`/healthz`, controls): true when it answered (or will). */
export type Routes = (req: IncomingMessage, res: ServerResponse, path: string[]) => boolean;

export interface ListenerOptions {
  /** Peers besides loopback that may connect. Default: none. */
  allow?: readonly AddressRange[];
  routes?: Routes;
  log?: BridgeLog;
  /** The largest frame read from a manager, at least (and by default) SERVER_MIN_FRAME_BYTES. */
  maxPayload?: number;
  /** The error of the 403 answered to an HTTP request from a peer not allowed. */
  refusedPeerMessage?: string;
  /** Serve HTTPS and `wss://` with this certificate instead of plain HTTP and `ws://`. */
  tls?: ListenerTls;
}

/** The bridge's certificate, PEM. */
export interface ListenerTls {
  /** The certificate chain: the bridge's certificate first, then any intermediate CA certificates. */
  cert: string | Buffer;
  /** The certificate's private key. */
  key: string | Buffer;
  /** CA certificates to send along with the chain, when `cert` does not hold them. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
}

/** Servers of any per-session state. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- S is both read and written by a driver: unknown would take no server
type AnyBridgedServer = BridgedServer<any>;

export function createBridgeListener(
  servers: Iterable<AnyBridgedServer>,
  options: ListenerOptions & { tls: ListenerTls },
): TlsServer;
export function createBridgeListener(
  servers: Iterable<AnyBridgedServer>,
  options?: ListenerOptions & { tls?: undefined },
): Server;
export function createBridgeListener(
  servers: Iterable<AnyBridgedServer>,
  options?: ListenerOptions,
): Server | TlsServer;
export function createBridgeListener(
  servers: Iterable<AnyBridgedServer>,
  options: ListenerOptions = {},
): Server | TlsServer {
  const byName = new Map<string, AnyBridgedServer>();
  for (const server of servers) {
    if (byName.has(server.name)) throw new Error(`two servers are named ${server.name}`);
    byName.set(server.name, server);
  }
  const maxPayload = options.maxPayload ?? SERVER_MIN_FRAME_BYTES;
  if (!Number.isInteger(maxPayload) || maxPayload < SERVER_MIN_FRAME_BYTES) {
    throw new Error(`maxPayload must be an integer of at least ${SERVER_MIN_FRAME_BYTES} (SERVER_MIN_FRAME_BYTES)`);
  }
  const log = options.log ?? (() => {});
  const allowed = peerFilter(options.allow ?? []);
  const refusedPeer = options.refusedPeerMessage ?? 'address not allowed';
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false });

  const serveRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req.socket.remoteAddress)) return replyJson(res, 403, { error: refusedPeer });
    if (options.routes?.(req, res, pathOf(req))) return;
    replyJson(res, 404, { error: 'not found' });
  };
  const http = options.tls ? tlsServer(options.tls, serveRequest) : createServer(serveRequest);

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!allowed(req.socket.remoteAddress)) {
      log({ msg: 'manager connection refused: address not allowed', peer: req.socket.remoteAddress });
      return refuse(socket, 403, 'Forbidden');
    }
    const path = pathOf(req);
    const server = path.length === 1 ? byName.get(path[0]) : undefined;
    if (!server) return refuse(socket, 404, 'Not Found');
    if (!server.available) return refuse(socket, 503, 'Service Unavailable');
    if (server.full) {
      server.log({
        msg: 'manager connection refused: too many sessions',
        server: server.name,
        peer: req.socket.remoteAddress,
        maxSessions: server.limits.maxSessions,
      });
      return refuse(socket, 503, 'Service Unavailable');
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      server.accept(ws, `${req.socket.remoteAddress}:${req.socket.remotePort}`, req.socket);
    });
  });

  http.on('close', () => wss.close());
  return http;
}

function tlsServer(tls: ListenerTls, serveRequest: (req: IncomingMessage, res: ServerResponse) => void): TlsServer {
  const pem = (value: unknown) => (typeof value === 'string' || Buffer.isBuffer(value)) && value.length > 0;
  if (!pem(tls.cert)) throw new Error('tls.cert must be a PEM certificate chain (a string or Buffer)');
  if (!pem(tls.key)) throw new Error('tls.key must be a PEM private key (a string or Buffer)');
  if (tls.ca !== undefined && !(pem(tls.ca) || (Array.isArray(tls.ca) && tls.ca.every(pem)))) {
    throw new Error('tls.ca must be PEM CA certificates (a string, a Buffer or a list of them)');
  }
  try {
    return createTlsServer(
      { cert: tls.cert, key: tls.key, ca: tls.ca as string | Buffer | Array<string | Buffer> | undefined },
      serveRequest,
    );
  } catch (err) {
    throw new Error(`tls: the certificate and key do not load: ${(err as Error).message}`, { cause: err });
  }
}

/** The request's path segments, decoded; a segment that does not decode is kept as sent. */
export function pathOf(req: IncomingMessage): string[] {
  const url = new URL(req.url ?? '/', 'http://bridge.invalid');
  return url.pathname
    .split('/')
    .filter((p) => p.length > 0)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
}

export function replyJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}
