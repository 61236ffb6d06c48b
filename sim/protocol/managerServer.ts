/**
 * The simulator's one listening socket, the bridge kit's listener (bridge/kit/listener.ts) over its trading servers:
 * WebSocket upgrades at `/<server>` become manager sessions of that trading server (sim/protocol/simDriver.ts), and
 * the simulator adds its own routes beside them: `/control/...` is the fault control channel, `/healthz` says the
 * process is alive. Peers are judged by the address their connection comes from: loopback (127.0.0.1, ::1) always,
 * and the addresses and ranges of `allow` (SIM_MANAGER_ALLOW); anyone else is refused before its request is served.
 * The fault controls answer loopback, or an allowed peer that presents `Authorization: Bearer <controlToken>` when a
 * token is configured (SIM_CONTROL_TOKEN).
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { createBridgeListener, isLoopback } from '../../bridge/kit/index.js';
import type { AddressRange } from '../../shared/addressRanges.js';
import { SERVER_MIN_FRAME_BYTES } from '../../shared/protocol.js';
import { handleControl, reply } from '../control/controlRoutes.js';
import type { Logger, TradingServer } from '../server/tradingServer.js';

/** Large enough for a UserRecordsRequest with a long login list. */
const MAX_FRAME_BYTES = SERVER_MIN_FRAME_BYTES;

export interface PeerPolicy {
  /** Peers besides loopback that may open manager sessions and read /healthz. Default: none. */
  allow?: readonly AddressRange[];
  /** Unset: the fault controls answer loopback peers only. */
  controlToken?: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function createManagerServer(
  servers: ReadonlyMap<string, TradingServer>,
  log: Logger,
  policy: PeerPolicy = {},
): Server {
  const tokenDigest = policy.controlToken === undefined ? null : digest(policy.controlToken);

  /** Loopback, or the configured token as a bearer token (compared in constant time). */
  const controlRefusal = (req: IncomingMessage): [number, string] | null => {
    if (isLoopback(req.socket.remoteAddress)) return null;
    if (tokenDigest === null) return [403, 'the fault controls answer loopback only (SIM_CONTROL_TOKEN unset)'];
    const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (presented !== undefined && timingSafeEqual(digest(presented), tokenDigest)) return null;
    return [401, 'the fault controls need Authorization: Bearer <SIM_CONTROL_TOKEN> from this address'];
  };

  return createBridgeListener(
    [...servers.values()].map((server) => server.bridge),
    {
      allow: policy.allow,
      log,
      maxPayload: MAX_FRAME_BYTES,
      refusedPeerMessage: 'address not allowed (loopback and SIM_MANAGER_ALLOW only)',
      routes: (req, res, path) => {
        if (path[0] === 'control') {
          const refusal = controlRefusal(req);
          if (refusal) {
            log({ msg: 'control request refused', peer: req.socket.remoteAddress, status: refusal[0] });
            reply(res, refusal[0], { error: refusal[1] });
            return true;
          }
          handleControl(req, res, servers, path.slice(1)).catch((err: Error) => {
            log({ msg: 'control request failed', error: err.message });
            if (!res.headersSent) reply(res, 500, { error: 'control request failed' });
          });
          return true;
        }
        if (path.length === 1 && path[0] === 'healthz') {
          reply(res, 200, { status: 'ok', servers: [...servers.keys()] });
          return true;
        }
        return false;
      },
    },
  );
}
