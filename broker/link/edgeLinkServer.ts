/**
 * The edge link server: WebSocket upgrades on `/link` from the edge's link objects, authenticated with the shared
 * broker secret, each carrying many concurrent calls (`shared/frames.ts`). The secret is checked before the upgrade
 * so an unauthenticated client never gets a socket, and compared in constant time through fixed-length digests.
 *
 * Heartbeats (`#ping`) and failover notices (`#failover`) are answered here at once, never behind calls. While the
 * broker drains (`startDrain`) every link has been told so by a `DrainFrame`, new upgrades get 503, and frames that
 * would start work (calls, `#subscribe`, `#replicate`) are answered `notTaken` without running; `#outcome`,
 * `#unsubscribe` and a repeat of a call id this broker already ran are still answered.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  FAILOVER_OP,
  OUTCOME_OP,
  PING_OP,
  UNSUBSCRIBE_OP,
  type CallFailed,
  type CallFrame,
  type CallOk,
  type DrainFrame,
  type FailoverArgs,
  type HelloFrame,
  type PingReport,
} from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { writeBatch, type Corkable } from '../../shared/writeBatch.js';
import type { Logger } from '../observability/log.js';
import type { CallDispatcher } from './callDispatcher.js';
import { isStreamOp, StreamSubscriptions } from '../stream/streamSubscriptions.js';
import type { StreamEvent, StreamTopic } from '../../shared/streams.js';
import type { PlatformEvents } from '../stream/platformEvents.js';
import { EdgeReplication, isReplicationOp, type ReplicaSource } from './edgeReplication.js';
import { parseJson } from '../../shared/losslessJson.js';

/** Finds the live stream of a platform the broker serves, for `#subscribe` frames. */
export type StreamSource = (platform: string) =>
  | {
      family: Family;
      events: PlatformEvents;
      /** The current records of the topics given, shaped as stream events (`Added`). */
      snapshot?: (topics: readonly StreamTopic[]) => StreamEvent[];
    }
  | undefined;

/** Largest call frame accepted; the edge bounds bodies well below this. */
export const LINK_MAX_PAYLOAD = 16 * 1024 * 1024;

export const BROKER_VERSION = '0.1.0';

/**
 * Edge links are pinged this often. A link whose peer vanished without closing TCP (a suspended isolate, a dead
 * network path) would otherwise hold its socket forever; one missed pong closes it.
 */
export const LINK_HEARTBEAT_MS = 15_000;

/** `ws.send` options of a binary frame and of a text frame (`Reply`), bytes or not. */
const BINARY = { binary: true } as const;
const TEXT = { binary: false } as const;
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Checks the shape of a parsed call frame; returns what is wrong, or null. */
function callFrameProblem(frame: Record<string, unknown>): string | null {
  if (typeof frame.platform !== 'string') return 'platform must be a string';
  if (typeof frame.op !== 'string') return 'op must be a string';
  if (
    frame.args !== undefined &&
    (typeof frame.args !== 'object' || frame.args === null || Array.isArray(frame.args))
  ) {
    return 'args must be an object';
  }
  if (typeof frame.timeoutMs !== 'number' || !(frame.timeoutMs > 0)) return 'timeoutMs must be a positive number';
  if (frame.traceId !== undefined && typeof frame.traceId !== 'string') return 'traceId must be a string';
  if (
    frame.callId !== undefined &&
    (typeof frame.callId !== 'string' || frame.callId.length === 0 || frame.callId.length > 200)
  ) {
    return 'callId must be a string of 1 to 200 characters';
  }
  return null;
}

/** Link events, for the broker's counters. */
export interface LinkEvents {
  opened(): void;
  refused(): void;
  /** A `#failover` notice, its reason and kind each a known value or `other`. */
  failover?(labels: { reason: string; kind: string }, platform: string): void;
  /** A call frame marked `moved`. */
  moved?(): void;
  /** A frame refused while draining. */
  notTaken?(): void;
}

const FAILOVER_REASONS: ReadonlySet<string> = new Set<FailoverArgs['reason']>([
  'lost',
  'hung',
  'unreachable',
  'draining',
  'preferred',
]);
const FAILOVER_KINDS: ReadonlySet<string> = new Set<FailoverArgs['kind']>(['link', 'stream']);

/** A failover notice's reason and kind, each one of the known values or `other`: counter labels stay a bounded set. */
export function failoverLabels(args: Record<string, unknown> | undefined): { reason: string; kind: string } {
  const { reason, kind } = args ?? {};
  return {
    reason: typeof reason === 'string' && FAILOVER_REASONS.has(reason) ? reason : 'other',
    kind: typeof kind === 'string' && FAILOVER_KINDS.has(kind) ? kind : 'other',
  };
}

/** What a frame refused by a draining broker is answered. */
export const NOT_TAKEN_MESSAGE = 'the broker is draining: call not taken';

/** The state of a platform for heartbeats (`PingReport.platform`). */
export type PlatformState = (platform: string) => PingReport['platform'];

export class EdgeLinkServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: LINK_MAX_PAYLOAD,
    perMessageDeflate: false,
  });
  private readonly expected: Buffer;
  /** Links that answered the last ping. */
  private readonly alive = new WeakSet<WebSocket>();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private drainingFlag = false;
  private noLinks: Array<() => void> = [];

  constructor(
    secret: string,
    private readonly dispatcher: CallDispatcher,
    private readonly log: Logger,
    private readonly brokerId: string,
    heartbeatMs = LINK_HEARTBEAT_MS,
    private readonly events: LinkEvents = { opened() {}, refused() {} },
    private readonly streams: StreamSource = () => undefined,
    private readonly replicas: ReplicaSource = () => undefined,
    private readonly platformState: PlatformState = () => 'absent',
  ) {
    this.expected = digest(`Bearer ${secret}`);
    this.wss.on('connection', (ws, req: IncomingMessage) => this.onLink(ws, req.socket));
    this.heartbeat = setInterval(() => this.checkLinks(), heartbeatMs);
    this.heartbeat.unref();
  }

  private checkLinks(): void {
    for (const ws of this.wss.clients) {
      if (!this.alive.has(ws)) {
        this.log('warn', { msg: 'edge link closed: no answer to the heartbeat' });
        ws.terminate();
        continue;
      }
      this.alive.delete(ws);
      ws.ping();
    }
  }

  get linkCount(): number {
    return this.wss.clients.size;
  }

  /**
   * Resolves once the links are let go: none open (an edge closes a draining broker's link once its calls there are
   * answered), or no frame but heartbeats came on any for `quietMs` (a peer that keeps its link open: nothing it sent
   * can still be on its way).
   */
  async whenLetGo(quietMs: number): Promise<void> {
    for (;;) {
      if (this.wss.clients.size === 0) return;
      const quietFor = Date.now() - this.lastFrameAt;
      if (quietFor >= quietMs) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, quietMs - quietFor);
        this.noLinks.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** When the last frame other than a heartbeat arrived on any link. */
  private lastFrameAt = 0;

  get draining(): boolean {
    return this.drainingFlag;
  }

  /** Starts draining: every open link is told by a `DrainFrame`; returns how many were. */
  startDrain(): number {
    if (this.drainingFlag) return 0;
    this.drainingFlag = true;
    // The quiet time counts from now: a call sent just before the edge heard of the drain may be on its way.
    this.lastFrameAt = Date.now();
    const text = JSON.stringify({ drain: { broker: this.brokerId } } satisfies DrainFrame);
    let told = 0;
    for (const ws of this.wss.clients) {
      if (ws.readyState !== ws.OPEN) continue;
      ws.send(text);
      told++;
    }
    return told;
  }

  /** Handles an upgrade request for `/link`: refuses a wrong or missing secret with 401, else opens the link. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.authorized(req.headers.authorization)) {
      this.log('warn', { msg: 'edge link refused: bad credentials', remote: req.socket.remoteAddress });
      this.events.refused();
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
      );
      socket.destroy();
      return;
    }
    // Taken while draining too: such a link is told at once that the broker drains, takes no calls on it, and serves
    // the outcome queries a keyed call's ledger still has to ask this broker.
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  close(): void {
    clearInterval(this.heartbeat);
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  /** While draining: frames that start nothing (an outcome query, an unsubscribe, a call id that already ran). */
  private takenWhileDraining(call: CallFrame): boolean {
    if (call.op === OUTCOME_OP || call.op === UNSUBSCRIBE_OP) return true;
    return call.callId !== undefined && this.dispatcher.outcomes.has(call.callId);
  }

  private authorized(header: string | undefined): boolean {
    if (typeof header !== 'string') return false;
    return timingSafeEqual(digest(header), this.expected);
  }

  private onLink(ws: WebSocket, socket: Corkable): void {
    this.log('info', { msg: 'edge link opened', links: this.wss.clients.size });
    this.events.opened();
    this.alive.add(ws);
    ws.on('pong', () => this.alive.add(ws));
    const hello: HelloFrame = { hello: { broker: this.brokerId, version: BROKER_VERSION } };
    ws.send(JSON.stringify(hello));
    if (this.drainingFlag) ws.send(JSON.stringify({ drain: { broker: this.brokerId } } satisfies DrainFrame));
    // The answers of one turn (a batch of calls read from one TCP segment) leave in one socket write.
    const hold = writeBatch(socket);
    const reply = (frame: string | Buffer, binary?: boolean): boolean => {
      if (ws.readyState !== ws.OPEN) return false;
      hold();
      ws.send(frame, binary ? BINARY : TEXT);
      return true;
    };
    const subscriptions = new StreamSubscriptions(
      {
        send: reply,
        get bufferedAmount() {
          return ws.bufferedAmount;
        },
      },
      this.streams,
    );
    const replication = new EdgeReplication(
      {
        send: reply,
        get bufferedAmount() {
          return ws.bufferedAmount;
        },
      },
      this.replicas,
    );
    ws.on('message', (data, isBinary) => {
      let frame: unknown;
      try {
        // Lossless: a PF5 id beyond 2^53 − 1 in the arguments stays exact (a bigint).
        frame = parseJson(isBinary ? Buffer.from(data as Buffer).toString('utf8') : (data as Buffer).toString());
      } catch {
        frame = undefined;
      }
      if (typeof frame !== 'object' || frame === null || typeof (frame as { id?: unknown }).id !== 'number') {
        // Nothing to answer it with: a peer that sends such frames is not an edge we understand.
        this.log('warn', { msg: 'edge link closed: unreadable frame' });
        ws.close(1007, 'malformed frame');
        return;
      }
      const problem = callFrameProblem(frame as Record<string, unknown>);
      if (problem) {
        reply(
          JSON.stringify({
            id: (frame as { id: number }).id,
            ok: false,
            error: { code: 'Internal', managerCode: null, message: `malformed call frame: ${problem}` },
          }),
        );
        return;
      }
      const call = frame as CallFrame;
      if (call.op === PING_OP) {
        const data: PingReport = {
          broker: this.brokerId,
          draining: this.drainingFlag,
          platform: this.platformState(call.platform),
        };
        reply(JSON.stringify({ id: call.id, ok: true, data } satisfies CallOk));
        return;
      }
      this.lastFrameAt = Date.now();
      if (call.op === FAILOVER_OP) {
        const labels = failoverLabels(call.args);
        this.events.failover?.(labels, call.platform);
        this.log('info', { msg: 'failover notice', platform: call.platform, ...labels });
        reply(JSON.stringify({ id: call.id, ok: true, data: true } satisfies CallOk));
        return;
      }
      if (call.moved === true) this.events.moved?.();
      if (this.drainingFlag && !this.takenWhileDraining(call)) {
        this.events.notTaken?.();
        reply(
          JSON.stringify({
            id: call.id,
            ok: false,
            error: { code: 'NoConnect', managerCode: null, message: NOT_TAKEN_MESSAGE },
            notTaken: true,
          } satisfies CallFailed),
        );
        return;
      }
      if (isStreamOp(call.op)) {
        subscriptions.handle(call);
        return;
      }
      if (isReplicationOp(call.op)) {
        replication.handle(call);
        return;
      }
      this.dispatcher.dispatch(call, reply);
    });
    ws.on('close', () => subscriptions.close());
    ws.on('close', () => replication.close());
    ws.on('close', () => {
      this.log('info', { msg: 'edge link closed', links: this.wss.clients.size });
      if (this.wss.clients.size === 0) for (const resolve of this.noLinks.splice(0)) resolve();
    });
    ws.on('error', (error) => this.log('warn', { msg: 'edge link error', error: error.message }));
  }
}
