/**
 * A scripted stand-in for the broker in edge tests: serves `/healthz` and the `/link` WebSocket on 127.0.0.1, checks
 * the link's shared secret, records every call frame and answers from a per-op table that can delay, hang, hold until
 * the test answers, or drop, and push a late outcome after its answer.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { OUTCOME_OP, type CallFrame, type CallFailed, type CallOk, type LateFrame } from '../../shared/frames.js';
import { REPLICATE_OP } from '../../shared/replication.js';
import { startTestEdge, type TestEdge } from '../support/edge.js';

export const BROKER_SECRET = 'test-broker-secret';

/** What the broker does with one call: answer (optionally after a delay), never answer, or close the link. */
/** A result frame without its id (the fake broker fills it in). */
export type Reply = Omit<CallOk, 'id'> | Omit<CallFailed, 'id'>;

export type Script =
  | {
      reply: Reply | ((frame: CallFrame) => Reply);
      delayMs?: number;
      /** After the reply, push a `late` frame with this report for the call's `callId` on the same link. */
      late?: { afterMs: number; report: LateFrame['late']['report'] };
      /** Answer as the broker answers a large call: its frame laid out id first, as a binary frame of its UTF-8. */
      binary?: true;
    }
  | { hang: true }
  /** Keep the call unanswered until the test answers it (`answerHeld`). */
  | { hold: true }
  | { drop: true };

export interface FakeBroker {
  url: string;
  frames: CallFrame[];
  /** For each of `frames`, the number of the link it came on (1 for the first link opened). */
  frameLinks: number[];
  /** `#outcome` queries (answered from `script.get('#outcome')`, by default with no report). */
  queries: CallFrame[];
  /**
   * `#replicate` requests: refused as by a broker without edge replicas, unless `script` has an entry for
   * REPLICATE_OP, which then answers them like any op (and `push` sends the replication's frames).
   */
  replications: number;
  /** The `#replicate` request frames received. */
  replicateFrames: CallFrame[];
  /** Link upgrade attempts that passed the secret check. */
  links: number;
  /** Upgrade attempts refused for a wrong or missing secret. */
  refused: number;
  script: Map<string, Script>;
  health: { status: number; body: unknown };
  framesFor(op: string): CallFrame[];
  /** The calls held unanswered now (script `hold`), in arrival order. */
  held: CallFrame[];
  /** Answers every held call with `reply` (on its own link, if still open); how many it answered. */
  answerHeld(reply: Reply): number;
  dropLinks(): void;
  /** Sends a frame without an id (a replication's push) on every open link. */
  push(frame: unknown): void;
  close(): Promise<void>;
}

/** A broker taking links that carry `secret` (the edges' BROKER_SECRET unless a test gives another). */
export async function startFakeBroker(secret = BROKER_SECRET): Promise<FakeBroker> {
  const sockets = new Set<WebSocket>();
  const holders: Array<(reply: Reply) => void> = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(broker.health.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(broker.health.body));
      return;
    }
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (req.url !== '/link' || req.headers.authorization !== `Bearer ${secret}`) {
      broker.refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const link = ++broker.links;
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.send(JSON.stringify({ hello: { broker: 'fake', version: 'test' } }));
      ws.on('message', (raw) => {
        const frame = JSON.parse((raw as Buffer).toString('utf8')) as CallFrame;
        // Link objects ask for edge replicas when a link opens: this broker has none, and refuses as an older one does.
        if (frame.op === REPLICATE_OP) {
          broker.replications++;
          broker.replicateFrames.push(frame);
        }
        if (frame.op === REPLICATE_OP && !broker.script.has(REPLICATE_OP)) {
          ws.send(
            JSON.stringify({
              id: frame.id,
              ok: false,
              error: { code: 'NotFound', managerCode: null, message: `operation ${frame.op} not served` },
            }),
          );
          return;
        }
        // Outcome queries are kept apart: ledgers also send them on their own (follow-ups), between tests.
        if (frame.op === OUTCOME_OP) broker.queries.push(frame);
        else if (frame.op !== REPLICATE_OP) {
          broker.frames.push(frame);
          broker.frameLinks.push(link);
        }
        const s: Script = broker.script.get(frame.op) ?? { reply: { ok: true, data: null } };
        if ('hang' in s) return;
        if ('drop' in s) {
          ws.terminate();
          return;
        }
        if ('hold' in s) {
          broker.held.push(frame);
          holders.push((reply) => {
            if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ ...reply, id: frame.id }));
          });
          return;
        }
        const send = () => {
          const body = typeof s.reply === 'function' ? s.reply(frame) : s.reply;
          if (ws.readyState === ws.OPEN) {
            if (s.binary) ws.send(Buffer.from(JSON.stringify({ id: frame.id, ...body })));
            else ws.send(JSON.stringify({ ...body, id: frame.id }));
          }
          if (s.late && frame.callId) {
            const late: LateFrame = { late: { callId: frame.callId, report: s.late.report } };
            setTimeout(() => {
              if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(late));
            }, s.late.afterMs);
          }
        };
        if (s.delayMs) setTimeout(send, s.delayMs);
        else send();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const broker: FakeBroker = {
    url: `http://127.0.0.1:${port}`,
    frames: [],
    frameLinks: [],
    queries: [],
    replications: 0,
    replicateFrames: [],
    links: 0,
    refused: 0,
    script: new Map(),
    health: { status: 200, body: { status: 'ok', platforms: {} } },
    framesFor: (op) => broker.frames.filter((f) => f.op === op),
    held: [],
    answerHeld(reply) {
      const answer = holders.splice(0);
      broker.held.length = 0;
      for (const send of answer) send(reply);
      return answer.length;
    },
    dropLinks() {
      for (const ws of sockets) ws.terminate();
    },
    push(frame) {
      for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return broker;
}

/**
 * Registers the hooks of a test file that runs the real edge against one scripted broker: started once (with `vars`
 * as extra edge variables, and `log` receiving the worker's output lines when given), the script and received frames
 * cleared before each test, both stopped at the end. Read the fields inside tests.
 */
export function edgeWithFakeBroker(
  /** The edge's variables, or a function of the started broker giving them (a variable naming the broker's URL). */
  vars: Record<string, string> | ((broker: FakeBroker) => Promise<Record<string, string>>) = {},
  options: { log?: (line: string, stream: 'stdout' | 'stderr') => void } = {},
): { edge: TestEdge; broker: FakeBroker; token: string } {
  const ctx = {} as { edge: TestEdge; broker: FakeBroker; token: string };
  beforeAll(async () => {
    ctx.broker = await startFakeBroker();
    ctx.edge = await startTestEdge({
      vars: { BROKER_URL: ctx.broker.url, ...(typeof vars === 'function' ? await vars(ctx.broker) : vars) },
      ...(options.log ? { log: options.log } : {}),
    });
    ctx.token = await ctx.edge.token();
  }, 60_000);
  afterAll(async () => {
    await ctx.edge?.close();
    await ctx.broker?.close();
  });
  beforeEach(() => {
    ctx.broker.frames.length = 0;
    ctx.broker.frameLinks.length = 0;
    ctx.broker.queries.length = 0;
    ctx.broker.script.clear();
  });
  return ctx;
}
