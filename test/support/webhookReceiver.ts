/**
 * A webhook receiver for tests: an HTTP server on 127.0.0.1 that verifies every delivery's signature with the
 * `standardwebhooks` package (an implementation this project did not write) and keeps what it received; what it
 * answers is set per test (a status, a Retry-After, how long it holds each answer back, counting the deliveries it
 * holds at once), and it can be stopped and started again on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed body when its signature verified under the receiver's secret; null when it did not. */
  verified: Record<string, unknown> | null;
  /** What the receiver answered. */
  status: number;
  /** When it came (ms since the epoch). */
  at: number;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** The verified deliveries, each webhook-id once (as a receiver that deduplicates keeps them). */
  unique(): Record<string, unknown>[];
  /** The secret deliveries are verified with (set once the endpoint is registered). */
  secret: string | null;
  /** What the next deliveries are answered: a status and headers (default 204). */
  answer: { status: number; headers?: Record<string, string> };
  /**
   * How long each answer is held back (default 0), and the most deliveries it has held at once of those `counted`
   * (by webhook-id; all of them when unset).
   */
  holdMs: number;
  mostAtOnce: number;
  counted?: (webhookId: string) => boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let server: Server | undefined;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    secret: null,
    answer: { status: 204 },
    holdMs: 0,
    mostAtOnce: 0,
    unique() {
      const seen = new Set<string>();
      const out: Record<string, unknown>[] = [];
      for (const r of receiver.received) {
        if (!r.verified || seen.has(r.id) || r.status >= 300) continue;
        seen.add(r.id);
        out.push(r.verified);
      }
      return out;
    },
    async start() {
      server = createServer((req, res) => void handle(req, res));
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${port}/hooks`;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    close: () => receiver.stop(),
  };
  let atOnce = 0;
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const counts = receiver.counted?.(String(req.headers['webhook-id'] ?? '')) ?? true;
    if (counts) receiver.mostAtOnce = Math.max(receiver.mostAtOnce, ++atOnce);
    try {
      await answer(req, res);
    } finally {
      if (counts) atOnce--;
    }
  }
  async function answer(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let verified: Record<string, unknown> | null = null;
    try {
      if (receiver.secret) verified = new Webhook(receiver.secret).verify(body, headers) as Record<string, unknown>;
    } catch {
      verified = null;
    }
    const { status, headers: extra } = receiver.answer;
    receiver.received.push({
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      body,
      verified,
      status,
      at: Date.now(),
    });
    if (receiver.holdMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.holdMs));
    res.writeHead(status, extra);
    res.end();
  }
  await receiver.start();
  return receiver;
}
