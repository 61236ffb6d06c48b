/**
 * `npm run drill:attack`: attacks on a whole stack (simulator, broker, edge in local workerd) started on a fresh data
 * folder, each printed as one line with its measured figures and HELD or NOT HELD, in the order:
 *
 *  0  a fresh data folder: `/healthz` and `/connect/token` polled every 100 ms from the first moment of the start (as
 *     `npm start` starts the stack), counting answers by status (no listener yet, 503 RegistryNotReady, 500, 200),
 *     and a token asked for as soon as `/healthz` first says 200; three such starts, each on a fresh folder (the
 *     attacks run on the last that came up, or, if none did, on one more start, unpolled);
 *  1  an SSE stream and a hub socket of a client that is disabled, and of a token that expires: how long until each
 *     is ended (SSE `closed` event, hub Close message and close frame) and what arrived after;
 *  2  30 wrong secrets for a client from one address, then its right secret from another address and on the local
 *     socket (distinct addresses come through Miniflare's own entry, which sets `request.cf`, as Cloudflare's front
 *     does; the local socket is one source for every caller); and 29 wrong secrets from one address, 12 s without a
 *     request, 29 more, in one rate-limit window;
 *  3  a flood of invented client ids, 8 callers, from one address and then from a new address per request, while
 *     another client's cached reads are timed on a thread of their own: latencies before and during, answers by
 *     status, secrets verified (the edge's verification counter, read every second), counters spent by the invented
 *     ids, workerd's CPU and memory, and the machine's CPU pressure;
 *  4  200 hub sockets that never send the handshake;
 *  5  600 SubscribeToTicks on one socket;
 *  6  huge arrays, a large invalid body, invalid UTF-8, and framing over a raw socket; an answer without the worker's
 *     `traceparent` header came from local workerd itself, before the worker ran;
 *  7  another organization's platforms down (one behind a broker that is not running, one on the same broker whose
 *     trading server is not there): the first organization's authenticated `/healthz`;
 *  8  the simulator frozen with SIGSTOP: seconds until `/healthz` shows its platforms down; then SIGCONT;
 *  9  UserPasswordCheck with a read-only client, and 6 wrong checks of one login;
 * 10  a read-only client flooding the manager session (a login repeated 18,542 times, bursts of 32 batch reads, 800
 *     mails of 65,536 characters and unpaged MailsRequest) while another client writes under Idempotency-Keys.
 *
 * The stack runs with the defaults of docs/operating.md's configuration table (variables set in this environment are
 * passed on, as `npm start` does). Each finding's bound is printed in its title. Findings go to standard output,
 * progress to standard error. Exits 0 when every finding held, 1 otherwise. Not part of `npm test`: it takes about
 * three minutes.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { decodeJwt } from 'jose';
import WebSocket from 'ws';
import { startStack, tokenExpiringIn, type Stack } from '../launcher/stack.js';
import { writePrivateFile } from '../launcher/privateData.js';
import { hashSecret } from '../shared/secrets.js';
import {
  counterSpent, countLabels, findingLine, ms, ratio, summarize, type CounterReading, type Finding,
} from './attackFigures.js';
import { cpuPressureUs } from './measure.js';
import { objectCall } from '../launcher/edge.js';
import { shardName } from '../workers/limits/counterShards.js';
import { brokerMetric } from '../test/support/brokerMetric.js';
import { WORKER_DEFAULTS } from '../shared/environment.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sleep = (milliseconds: number) => new Promise((r) => setTimeout(r, milliseconds));
const seconds = (milliseconds: number | null) => (milliseconds === null ? 'never' : `${(milliseconds / 1000).toFixed(1)} s`);
const progress = (line: string) => process.stderr.write(`… ${line}\n`);

/** The edge's defaults (workers/registry/platformCache.ts, workers/limits/rateLimit.ts), unless set here. */
const CACHE_SECONDS = Number(process.env.REGISTRY_CACHE_SECONDS ?? 5);
const WINDOW_MS = Number(process.env.RATE_LIMIT_WINDOW_SECONDS ?? 60) * 1000;
const TOKEN_LIMIT = Number(process.env.TOKEN_RATE_LIMIT ?? 30);
const FAILURE_LIMIT = Number(process.env.TOKEN_FAILURE_LIMIT ?? 30);
const VERIFY_LIMIT = Number(process.env.TOKEN_VERIFY_LIMIT ?? 300);
const FAILURE_SHARDS = Number(process.env.TOKEN_FAILURE_SHARDS ?? WORKER_DEFAULTS.TOKEN_FAILURE_SHARDS);
/** How long past its exp the edge accepts a token, on REST and streams alike. */
const TOLERANCE_MS = Number(process.env.TOKEN_CLOCK_TOLERANCE_SECONDS ?? WORKER_DEFAULTS.TOKEN_CLOCK_TOLERANCE_SECONDS) * 1000;
/** A stream must end within a check interval of its cause; a second more for the query and the write. */
const STREAM_END_BOUND_MS = Math.max(1, CACHE_SECONDS) * 1000 + 1000;
/** docs/operating.md, "Probes, logs and metrics": a frozen trading server shows down within 10 s (keep-alive interval plus timeout). */
const FREEZE_BOUND_MS = 10_000;
/** Cached reads of another client under a flood of invented ids: their p50 may grow at most this much. */
const P50_BOUND = 3;

const findings: Finding[] = [];
const found = (f: Finding) => {
  findings.push(f);
  console.log(findingLine(f));
};

/** Every log line of the stack's processes, with the time it came. */
const logLines: Array<{ at: number; line: string }> = [];
const errorLinesSince = (from: number) =>
  logLines.filter((l) => l.at >= from && l.line.startsWith('edge ') && (/"level":"error"/.test(l.line) || l.line.includes('unhandled edge error')));

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The stack and its clients

let stack: Stack;
let edgeUrl: string;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (clientId: string, secret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();

/** A token request on the edge's local socket: status and body. */
async function tokenOnSocket(clientId: string, secret: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${edgeUrl}/connect/token`, { method: 'POST', headers: FORM, body: form(clientId, secret) });
  return { status: res.status, body: await res.json().catch(() => ({})) as Record<string, unknown> };
}

/** A token request that came through the front from `address` (Miniflare's entry sets `request.cf`). */
async function tokenFrom(address: string, clientId: string, secret: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await stack.edge.miniflare.dispatchFetch(`${edgeUrl}/connect/token`, {
    method: 'POST', headers: { ...FORM, 'CF-Connecting-IP': address }, body: form(clientId, secret),
  });
  return { status: res.status, body: await res.json().catch(() => ({})) as Record<string, unknown> };
}

/** Registers a client of the demo organization holding `scopes`; answers its id, secret and a token. */
async function newClient(name: string, scopes = 'webapi'): Promise<{ clientId: string; secret: string; token: string }> {
  const clientId = `drill-${name}-${randomUUID().slice(0, 8)}`;
  const secret = randomUUID();
  const h = await hashSecret(secret);
  const db = await stack.edge.db();
  await db.prepare('INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .bind(clientId, stack.organizationId, clientId, h.hash, h.salt, h.iterations, scopes, new Date().toISOString()).run();
  const answer = await tokenOnSocket(clientId, secret);
  if (answer.status !== 200) throw new Error(`no token for ${clientId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { clientId, secret, token: answer.body.access_token as string };
}

/** Reads a rate-limit counter without spending from it. */
async function counter(key: string, limit: number): Promise<CounterReading> {
  const grant = await objectCall<CounterReading>(stack.edge.miniflare, 'RATE_LIMITER', key, 'take', 0, { limit, windowMs: WINDOW_MS });
  return { left: grant.left, resetAt: grant.resetAt };
}

/**
 * The failure counters of the addresses that failed: which of the TOKEN_FAILURE_SHARDS objects counts each one
 * (workers/limits/counterShards.ts), and how many objects that is.
 */
async function failureShards(): Promise<{ shardOf: Map<string, string>; objects: number }> {
  const shardOf = new Map<string, string>();
  let objects = 0;
  for (let n = 0; n < FAILURE_SHARDS; n++) {
    const name = shardName('token-fail', n);
    const keys = Object.keys(await objectCall<Record<string, number>>(stack.edge.miniflare, 'RATE_LIMITER', name, 'counted'));
    if (keys.length > 0) objects++;
    for (const key of keys) shardOf.set(key, name);
  }
  return { shardOf, objects };
}

/** Reads one address's failure counter in the object that counts it, without spending from it. */
async function failureCounter(shards: Map<string, string>, address: string): Promise<CounterReading> {
  const key = `token-fail:${address}`;
  const shard = shards.get(key);
  if (!shard) return { left: FAILURE_LIMIT, resetAt: Date.now() - (Date.now() % WINDOW_MS) + WINDOW_MS };
  const grant = await objectCall<CounterReading>(stack.edge.miniflare, 'RATE_LIMITER', shard, 'take', 0, { limit: FAILURE_LIMIT, windowMs: WINDOW_MS }, key);
  return { left: grant.left, resetAt: grant.resetAt };
}

/** Waits for the next rate-limit window unless `needMs` is left of this one (windows are aligned to the clock). */
async function windowWithRoom(needMs: number) {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < needMs) {
    progress(`waiting ${seconds(left)} for a fresh rate-limit window`);
    await sleep(left + 200);
  }
}

async function getJson(path: string, token?: string): Promise<{ status: number; headers: Headers; body: any; bytes: number }> {
  const res = await fetch(`${edgeUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body, bytes: Buffer.byteLength(text) };
}

async function postJson(path: string, token: string, body: string | Uint8Array): Promise<{ status: number; headers: Headers; body: any; bytes: number }> {
  const res = await fetch(`${edgeUrl}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body as BodyInit,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = bytes.toString('utf8');
  try { parsed = JSON.parse(parsed as string); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body: parsed, bytes: bytes.length };
}

// ---------------------------------------------------------------------------------------------------------------
// Stream clients that note when everything arrived

interface Timed<T> { at: number; value: T }

class SseWatch {
  readonly events: Array<Timed<{ event: string; data: string }>> = [];
  status = 0;
  endedAt: number | null = null;
  private readonly abort = new AbortController();

  static async open(url: string, token: string): Promise<SseWatch> {
    const watch = new SseWatch();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: watch.abort.signal });
    watch.status = res.status;
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await res.text().catch(() => '');
      watch.endedAt = Date.now();
      return watch;
    }
    void watch.read(res.body);
    return watch;
  }

  private async read(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    let buffer = '';
    let event = 'message';
    let data: string[] = [];
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (data.length) this.events.push({ at: Date.now(), value: { event, data: data.join('\n') } });
            event = 'message';
            data = [];
          } else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
      }
    } catch { /* aborted */ }
    this.endedAt ??= Date.now();
  }

  closedEvent() {
    return this.events.find((e) => e.value.event === 'closed');
  }

  close() {
    this.abort.abort();
  }
}

type HubMessage = Record<string, any>;

/** A raw SignalR JSON-protocol socket on a platform's hub, answering the hub's flow probes as a client library does. */
class HubWatch {
  readonly received: Array<Timed<HubMessage>> = [];
  openedAt = 0;
  /** When the close frame came (the socket went CLOSING without this side closing it), and when it was closed. */
  closeFrameAt: number | null = null;
  closedAt: number | null = null;
  private poller: ReturnType<typeof setInterval> | undefined;

  private constructor(readonly ws: WebSocket) {}

  static async open(token: string, options: { handshake: boolean; platform?: string }): Promise<HubWatch> {
    const platform = options.platform ?? stack.platforms.pf4;
    const negotiate = await fetch(`${edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${platform}`, {
      method: 'POST', headers: { authorization: `Bearer ${token}` },
    });
    await negotiate.arrayBuffer();
    if (negotiate.status !== 200) throw new Error(`hub negotiate answered ${negotiate.status}`);
    const ws = new WebSocket(`${edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${platform}&access_token=${token}`);
    const hub = new HubWatch(ws);
    ws.on('message', (d) => {
      for (const record of d.toString().split('\u001e').filter(Boolean)) {
        const m = JSON.parse(record) as HubMessage;
        hub.received.push({ at: Date.now(), value: m });
        if (m.type === 1 && m.invocationId) hub.send({ type: 3, invocationId: m.invocationId, error: 'no result' });
      }
    });
    ws.on('close', () => { hub.closedAt ??= Date.now(); hub.closeFrameAt ??= hub.closedAt; hub.stopPolling(); });
    ws.on('error', () => {});
    await new Promise((resolveOpen, reject) => { ws.once('open', resolveOpen); ws.once('error', reject); });
    hub.openedAt = Date.now();
    hub.poller = setInterval(() => {
      if (ws.readyState >= WebSocket.CLOSING) {
        hub.closeFrameAt ??= Date.now();
        hub.stopPolling();
      }
    }, 50);
    if (options.handshake) {
      hub.send({ protocol: 'json', version: 1 });
      await until(() => hub.received.length > 0, 10_000);
      if (JSON.stringify(hub.received[0]?.value) !== '{}') throw new Error(`hub handshake answered ${JSON.stringify(hub.received[0]?.value)}`);
    }
    return hub;
  }

  send(m: object) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m) + '\u001e');
  }

  closeMessage() {
    return this.received.find((r) => r.value.type === 7);
  }

  /** Ticks: OnTick invocations and stream items. */
  ticks() {
    return this.received.filter((r) => (r.value.type === 1 && r.value.target === 'OnTick') || r.value.type === 2);
  }

  completion(invocationId: string) {
    return this.received.find((r) => r.value.type === 3 && r.value.invocationId === invocationId)?.value;
  }

  private stopPolling() {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
  }

  terminate() {
    this.stopPolling();
    this.ws.terminate();
  }
}

async function until(probe: () => boolean, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// 0. A fresh data folder, polled from the first moment

interface StartupPoll { stop(): Promise<void>; healthz: string[]; token: string[]; firstHealthy: number | null; firstToken: number | null; tokenAfterHealthy: string | null }

function pollStartup(url: string, clientId: string, secret: string, t0: number): StartupPoll {
  const poll: StartupPoll = { stop: async () => {}, healthz: [], token: [], firstHealthy: null, firstToken: null, tokenAfterHealthy: null };
  const label = async (res: Response) => {
    const body = await res.json().catch(() => ({})) as { errorCode?: string; status?: string; error?: string };
    return res.status === 200 ? '200' : `${res.status} ${body.errorCode ?? body.status ?? body.error ?? ''}`.trim();
  };
  const noAnswer = () => 'no listener yet';
  let running = true;
  const loop = (async () => {
    while (running) {
      const healthz = fetch(`${url}/healthz`).then(label, noAnswer);
      const token = poll.firstToken === null
        ? fetch(`${url}/connect/token`, { method: 'POST', headers: FORM, body: form(clientId, secret) }).then(label, noAnswer)
        : Promise.resolve(null);
      const [h, t] = await Promise.all([healthz, token]);
      poll.healthz.push(h);
      if (t !== null) {
        poll.token.push(t);
        if (t === '200') poll.firstToken = Date.now() - t0;
      }
      if (h === '200' && poll.firstHealthy === null) {
        poll.firstHealthy = Date.now() - t0;
        // What a script that waits for /healthz does next.
        poll.tokenAfterHealthy = await fetch(`${url}/connect/token`, { method: 'POST', headers: FORM, body: form(clientId, secret) }).then(label, noAnswer);
      }
      await sleep(100);
    }
  })();
  poll.stop = async () => { running = false; await loop; };
  return poll;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Streams after disable and after expiry

const sseUrl = () => `${edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/Stream?ticks`;

async function openStreams(token: string): Promise<{ sse: SseWatch; hub: HubWatch }> {
  const sse = await SseWatch.open(sseUrl(), token);
  if (sse.status !== 200) throw new Error(`SSE stream answered ${sse.status}`);
  const hub = await HubWatch.open(token, { handshake: true });
  hub.send({ type: 4, invocationId: 'all-ticks', target: 'StreamTicks', arguments: [] });
  hub.send({ type: 1, invocationId: 'eurusd', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
  const flowing = await until(() => sse.events.length > 0 && hub.ticks().length > 0, 15_000);
  if (!flowing) throw new Error(`streams not flowing: ${sse.events.length} SSE events, ${hub.ticks().length} hub ticks`);
  return { sse, hub };
}

/** What the streams did from `from` (the cause) until `to`. */
function streamFigures(sse: SseWatch, hub: HubWatch, from: number) {
  const closed = sse.closedEvent();
  const closeMessage = hub.closeMessage();
  const sseAfterCause = sse.events.filter((e) => e.at >= from && e.value.event !== 'closed');
  const hubAfterCause = hub.ticks().filter((t) => t.at >= from);
  return {
    sseClosedMs: closed ? closed.at - from : null,
    sseCode: closed ? (JSON.parse(closed.value.data) as { code?: string }).code ?? '?' : null,
    sseBeforeClose: sseAfterCause.filter((e) => !closed || e.at <= closed.at).length,
    sseAfterClose: closed ? sse.events.filter((e) => e.at > closed.at).length : 0,
    sseEndedMs: sse.endedAt === null ? null : sse.endedAt - from,
    hubCloseMessageMs: closeMessage ? closeMessage.at - from : null,
    hubError: closeMessage?.value.error as string | undefined,
    hubReconnect: closeMessage?.value.allowReconnect as boolean | undefined,
    hubCloseFrameMs: hub.closeFrameAt === null ? null : hub.closeFrameAt - from,
    hubBeforeClose: hubAfterCause.filter((t) => !closeMessage || t.at <= closeMessage.at).length,
    hubAfterClose: closeMessage ? hub.received.filter((r) => r.at > closeMessage.at).length : hubAfterCause.length,
  };
}

async function attackStreams(): Promise<void> {
  progress('1: streams after disable and after expiry');
  const disabled = await newClient('revoked');
  const expiring = await newClient('expiring');
  // A token of the second client as the token endpoint would issue it with TOKEN_TTL_SECONDS=9.
  const shortToken = await tokenExpiringIn(stack, expiring.token, 9);
  // The end of the token at the edge: its exp plus the clock tolerance, for REST and streams alike.
  const exp = decodeJwt(shortToken).exp! * 1000 + TOLERANCE_MS;
  const [a, b] = await Promise.all([openStreams(disabled.token), openStreams(shortToken)]);

  const restProbe = async (token: string, from: number, untilMs: number): Promise<number | null> => {
    while (Date.now() < untilMs) {
      const r = await getJson(`/api/v2/PF4/${stack.platforms.pf4}/ServerTime`, token);
      if (r.status === 401) return Date.now() - from;
      await sleep(100);
    }
    return null;
  };
  const db = await stack.edge.db();
  const disabledAt = Date.now();
  await db.prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind(disabled.clientId).run();
  const [restRevoked, restExpired] = await Promise.all([
    restProbe(disabled.token, disabledAt, disabledAt + 15_000),
    (async () => { await sleep(Math.max(0, exp - Date.now() - 200)); return restProbe(shortToken, exp, exp + 12_000); })(),
  ]);
  // 15 s after the disable, 10 s after the expiry.
  await sleep(Math.max(0, disabledAt + 15_000 - Date.now(), exp + 10_000 - Date.now()));
  const revoked = streamFigures(a.sse, a.hub, disabledAt);
  const expired = streamFigures(b.sse, b.hub, exp);
  for (const s of [a, b]) { s.sse.close(); s.hub.terminate(); }

  const describe = (f: ReturnType<typeof streamFigures>, rest: number | null, restWatchedMs: number) =>
    `SSE \`closed\` ${f.sseCode ?? 'none'} after ${seconds(f.sseClosedMs)} (${f.sseBeforeClose} events before it, ${f.sseAfterClose} after, stream ended ${seconds(f.sseEndedMs)}); ` +
    `hub Close "${f.hubError ?? 'none'}" allowReconnect ${String(f.hubReconnect)} after ${seconds(f.hubCloseMessageMs)}, close frame ${seconds(f.hubCloseFrameMs)} ` +
    `(${f.hubBeforeClose} ticks before it, ${f.hubAfterClose} messages after); ` +
    (rest === null ? `REST (ServerTime) still answered ${seconds(restWatchedMs)} after` : `REST (ServerTime) refused after ${seconds(rest)}`);
  const within = (v: number | null) => v !== null && v <= STREAM_END_BOUND_MS;
  found({
    id: '1a', title: `SSE stream + hub socket, client disabled (15 s watched; bound ${seconds(STREAM_END_BOUND_MS)})`,
    figures: describe(revoked, restRevoked, 15_000),
    held: revoked.sseCode === 'ClientRevoked' && within(revoked.sseClosedMs) && revoked.sseAfterClose === 0 &&
      (revoked.hubError ?? '').startsWith('ClientRevoked') && within(revoked.hubCloseMessageMs) && within(revoked.hubCloseFrameMs) &&
      revoked.hubAfterClose === 0,
  });
  found({
    id: '1b', title: `SSE stream + hub socket, token expired (10 s watched from exp + ${seconds(TOLERANCE_MS)} of clock tolerance; bound ${seconds(STREAM_END_BOUND_MS)})`,
    figures: describe(expired, restExpired, 12_000),
    held: expired.sseCode === 'TokenExpired' && within(expired.sseClosedMs) && expired.sseAfterClose === 0 &&
      (expired.hubError ?? '').startsWith('TokenExpired') && expired.hubReconnect === true && within(expired.hubCloseMessageMs) &&
      within(expired.hubCloseFrameMs) && expired.hubAfterClose === 0,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 2. 30 wrong secrets, then the right one

async function attackWrongSecrets(): Promise<void> {
  progress('2: 30 wrong secrets, then the right one');
  await windowWithRoom(10_000);
  const holder = await newClient('holder');
  const attacker = '203.0.113.7';
  const wrong: string[] = [];
  for (let i = 0; i < 30; i++) wrong.push(String((await tokenFrom(attacker, holder.clientId, `guess-${i}`)).status));
  const attackerRight = await tokenFrom(attacker, holder.clientId, holder.secret);
  const elsewhere = await tokenFrom('198.51.100.9', holder.clientId, holder.secret);
  const local = await tokenOnSocket(holder.clientId, holder.secret);
  const budget = await counter(`token:${holder.clientId}`, TOKEN_LIMIT);
  found({
    id: '2', title: '30 wrong secrets from 203.0.113.7, then the right secret',
    figures: `wrong secrets answered ${countLabels(wrong)}; the right secret from 198.51.100.9 ${elsewhere.status}` +
      `${elsewhere.status === 200 ? ' (token issued)' : ` ${JSON.stringify(elsewhere.body)}`}, on the local socket ${local.status}, ` +
      `from the attacker's own address ${attackerRight.status} ${String(attackerRight.body.error ?? '')}; the holder's token budget ` +
      `${budget.left} of ${TOKEN_LIMIT} left (3 tokens issued to it so far)`,
    held: wrong.every((s) => s === '401') && elsewhere.status === 200 && local.status === 200 && budget.left === TOKEN_LIMIT - 3,
  });
}

/**
 * The failure budget of one address across a pause: FAILURE_LIMIT − 1 wrong secrets (the budget not yet spent, so the
 * edge has learned no refusal), PAUSE_MS with no request from it, the same again, all in one rate-limit window. The
 * caller makes sure the window has room for it.
 */
const PAUSE_MS = 12_000;

async function attackPacedFailures(): Promise<Finding> {
  const holder = await newClient('paced');
  const address = '203.0.113.8';
  const burst = async () => {
    const statuses: string[] = [];
    for (let i = 0; i < FAILURE_LIMIT - 1; i++) statuses.push(String((await tokenFrom(address, holder.clientId, `guess-${i}`)).status));
    return statuses;
  };
  const windowEnds = Date.now() - (Date.now() % WINDOW_MS) + WINDOW_MS;
  const first = await burst();
  await sleep(PAUSE_MS);
  const second = await burst();
  const sameWindow = Date.now() < windowEnds;
  const admitted = [...first, ...second].filter((s) => s === '401').length;
  return {
    id: '2b', title: `${FAILURE_LIMIT - 1} wrong secrets from 203.0.113.8, ${PAUSE_MS / 1000} s without a request, ${FAILURE_LIMIT - 1} more (bound: ${FAILURE_LIMIT} failures per address per window)`,
    figures: `first ${countLabels(first)}, then ${countLabels(second)}: ${admitted} failures answered 401 from one address ` +
      `${sameWindow ? 'within one window' : '(the window turned meanwhile: not comparable)'}`,
    held: sameWindow && admitted <= FAILURE_LIMIT,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 3. A flood of invented client ids while cached reads are timed

/** workerd's processes started by this one: CPU seconds used and resident memory (MB), from /proc. */
function workerdUsage(): { cpuSeconds: number; rssMb: number } {
  let cpu = 0;
  let rss = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      if (name !== 'workerd' || Number(fields[1]) !== process.pid) continue;
      cpu += (Number(fields[11]) + Number(fields[12])) / 100;
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch { /* gone */ }
  }
  return { cpuSeconds: cpu, rssMb: rss };
}

/** Times one GET after another on its own thread until told to stop; then posts every read's time and outcome. */
const READER_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const reads = [];
let reading = true;
parentPort.on('message', () => { reading = false; });
(async () => {
  while (reading) {
    const t = performance.now();
    let ok = false;
    try {
      const res = await fetch(workerData.url, { headers: { authorization: 'Bearer ' + workerData.token } });
      const body = await res.json();
      ok = res.status === 200 && body.error === null;
    } catch {}
    reads.push({ at: Date.now(), ms: performance.now() - t, ok });
    await new Promise((r) => setImmediate(r));
  }
  parentPort.postMessage(reads);
})();
`;

async function attackFlood(): Promise<void> {
  progress('3: a flood of invented client ids while cached reads are timed');
  const reader = await stack.token();
  const users = await getJson(`/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?limit=1`, reader);
  const login = users.body.data[0].login as number;
  const readPath = `/api/v2/PF4/${stack.platforms.pf4}/UserRecordGet/${login}`;
  // The reads run on a thread of their own, so the flood's own client work in this thread does not delay them.
  const readerThread = new Worker(READER_THREAD, { eval: true, workerData: { url: `${edgeUrl}${readPath}`, token: reader } });
  const readsDone = new Promise<Array<{ at: number; ms: number; ok: boolean }>>((resolveReads, reject) => {
    readerThread.once('message', resolveReads);
    readerThread.once('error', reject);
  });
  const verifyReadings: CounterReading[] = [await counter('token-verify:all', VERIFY_LIMIT)];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sleep(1000);
      verifyReadings.push(await counter('token-verify:all', VERIFY_LIMIT));
    }
  })();

  await sleep(1000); // warm
  const baseFrom = Date.now();
  await sleep(3000);
  const baseTo = Date.now();

  const invented: string[] = [];
  let addressSerial = 0;
  const sampledAddresses: string[] = [];
  const flood = async (label: string, durationMs: number, address: () => string) => {
    const statuses: string[] = [];
    const unknownMs: number[] = [];
    const usage = workerdUsage();
    const pressure = cpuPressureUs();
    const from = Date.now();
    const end = from + durationMs;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (Date.now() < end) {
        const id = `invented-${randomUUID()}`;
        if (invented.length < 20) invented.push(id);
        const t = performance.now();
        const answer = await tokenFrom(address(), id, 'x').catch(() => ({ status: 0, body: {} }));
        statuses.push(String(answer.status || 'no answer'));
        if (answer.status === 401) unknownMs.push(performance.now() - t);
      }
    }));
    const to = Date.now();
    const after = workerdUsage();
    const short = (cpuPressureUs() - pressure) / ((to - from) * 10);
    return { label, from, to, statuses, unknownMs, cpuPerSecond: (after.cpuSeconds - usage.cpuSeconds) / ((to - from) / 1000), rssBefore: usage.rssMb, rssAfter: after.rssMb, short };
  };
  const oneSource = await flood('from one address (192.0.2.10), 5 s', 5000, () => '192.0.2.10');
  // Counters read at once after each flood; a reading counts only if its window began before the flood did.
  const oneAddress = await failureCounter((await failureShards()).shardOf, '192.0.2.10');
  invented.length = 0;
  const manySources = await flood('from a new address per request (198.18.0.0/15), 10 s', 10_000, () => {
    const n = addressSerial++;
    const address = `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;
    if (sampledAddresses.length < 20) sampledAddresses.push(address);
    return address;
  });
  const shards = await failureShards();
  const addressCounters = await Promise.all(sampledAddresses.map((a) => failureCounter(shards.shardOf, a)));
  const inventedCounters = await Promise.all(invented.map((id) => counter(`token:${id}`, TOKEN_LIMIT)));
  const sameWindow = (readings: CounterReading[], from: number) => readings.every((r) => r.resetAt - WINDOW_MS <= from);
  await sleep(1000);
  sampling = false;
  await sampler;
  readerThread.postMessage('stop');
  const reads = await readsDone;
  await readerThread.terminate();
  verifyReadings.push(await counter('token-verify:all', VERIFY_LIMIT));

  const inPhase = (from: number, to: number) => reads.filter((r) => r.at > from && r.at <= to);
  const base = summarize(inPhase(baseFrom, baseTo).map((r) => r.ms));
  const verified = counterSpent(verifyReadings, VERIFY_LIMIT);
  const untouched = inventedCounters.filter((c) => c.left === TOKEN_LIMIT).length;
  const manyReadable = sameWindow([...addressCounters, ...inventedCounters], manySources.from);
  const oneReadable = sameWindow([oneAddress], oneSource.from);
  const failedReads = reads.filter((r) => !r.ok).length;
  const phaseLine = (p: Awaited<ReturnType<typeof flood>>) => {
    const during = summarize(inPhase(p.from, p.to).map((r) => r.ms));
    const unknown = summarize(p.unknownMs);
    return {
      during,
      text: `${p.label}: ${p.statuses.length} token requests (${Math.round(p.statuses.length / ((p.to - p.from) / 1000))}/s) answered ${countLabels(p.statuses)}, ` +
        `401s took p50 ${ms(unknown.p50)}; cached reads p50 ${ms(during.p50)} (${ratio(during.p50, base.p50)}), p99 ${ms(during.p99)} (${ratio(during.p99, base.p99)}), n ${during.n}; ` +
        `workerd CPU ${p.cpuPerSecond.toFixed(2)} s/s, RSS ${Math.round(p.rssBefore)} → ${Math.round(p.rssAfter)} MB; ` +
        `machine short of CPU ${Number.isNaN(p.short) ? 'not reported' : `${Math.round(p.short)} % of the time`}`,
    };
  };
  const a = phaseLine(oneSource);
  const b = phaseLine(manySources);
  const p50Held = (d: { p50: number | null }) => d.p50 !== null && base.p50 !== null && d.p50 <= P50_BOUND * base.p50;
  found({
    id: '3a', title: `invented client ids from one address, 8 callers (bound: cached reads' p50 during at most ${P50_BOUND}× before)`,
    figures: `cached reads before: p50 ${ms(base.p50)}, p99 ${ms(base.p99)}, n ${base.n}. ${a.text}`,
    held: p50Held(a.during) && failedReads === 0,
  });
  // Beyond the finding (one source inventing ids): a distributed flood, a new address per request, each address
  // counted in one of the failure counter objects.
  found({
    id: '3c', title: `invented client ids from a new address per request, 8 callers (bound: cached reads' p50 during at most ${P50_BOUND}× before)`,
    figures: `cached reads before: p50 ${ms(base.p50)}. ${b.text}`,
    held: p50Held(b.during) && failedReads === 0,
  });
  found({
    id: '3b', title: 'what the invented ids cost',
    figures: `secrets verified (PBKDF2) during both floods: ${verified} (the edge's verification counter, ${verifyReadings.length} readings); ` +
      (manyReadable
        ? `token counters of ${untouched} of ${invented.length} invented ids sampled from the second flood untouched (${TOKEN_LIMIT} of ${TOKEN_LIMIT} left); ` +
          `${addressCounters.filter((c) => c.left === FAILURE_LIMIT - 1).length} of ${addressCounters.length} sampled addresses have a failure counter with 1 spent; `
        : 'the rate-limit window turned during the second flood: its counters not compared; ') +
      (oneReadable ? `192.0.2.10's failure counter ${oneAddress.left} of ${FAILURE_LIMIT} left; ` : '') +
      `failure counter objects: ${shards.objects} of TOKEN_FAILURE_SHARDS ${FAILURE_SHARDS} for ${addressSerial + 1} addresses, none per client id; cached reads failed: ${failedReads}`,
    held: verified === 0 && (!manyReadable || (untouched === invented.length && invented.length > 0)),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 4. 200 silent hub sockets

async function attackSilentSockets(): Promise<() => Promise<void>> {
  progress('4: 200 hub sockets that never send the handshake (watched 30 s)');
  const client = await newClient('silent');
  const hubs: HubWatch[] = [];
  const failures: string[] = [];
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 20 }, async () => {
      try { hubs.push(await HubWatch.open(client.token, { handshake: false })); } catch (error) { failures.push(String((error as Error).message)); }
    }));
  }
  const lastOpened = Math.max(...hubs.map((h) => h.openedAt));
  // The caller goes on with other attacks; this reports once 30 s passed for the last socket.
  return async () => {
    await sleep(Math.max(0, lastOpened + 30_500 - Date.now()));
    const by = (limitMs: number, at: (h: HubWatch) => number | null) => hubs.filter((h) => { const t = at(h); return t !== null && t - h.openedAt <= limitMs; }).length;
    const message = (h: HubWatch) => h.closeMessage()?.at ?? null;
    const frame = (h: HubWatch) => h.closeFrameAt;
    const messages = new Set(hubs.map((h) => h.closeMessage()?.value.error).filter(Boolean));
    const other = hubs.filter((h) => h.received.some((r) => r.value.type !== 7)).length;
    const delays = hubs.map((h) => message(h)).map((t, i) => (t === null ? null : t - hubs[i].openedAt)).filter((t): t is number => t !== null);
    const spread = summarize(delays);
    for (const h of hubs) h.terminate();
    found({
      id: '4', title: `${hubs.length} hub sockets that never send the handshake${failures.length ? ` (${failures.length} did not open: ${failures[0]})` : ''}`,
      figures: `Close message by 16 s ${by(16_000, message)}, by 30 s ${by(30_000, message)}; close frame by 16 s ${by(16_000, frame)}, by 30 s ${by(30_000, frame)}; ` +
        `Close message after p50 ${seconds(spread.p50)}, max ${seconds(spread.max)} from the socket's open; ` +
        `messages ${[...messages].map((m) => `"${m}"`).join(', ') || 'none'}; sockets sent anything else: ${other}`,
      held: hubs.length === 200 && by(30_000, message) === 200 && by(30_000, frame) === 200 && other === 0,
    });
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 5. 600 subscriptions on one socket

async function attackSubscriptions(): Promise<void> {
  progress('5: 600 SubscribeToTicks on one socket');
  const client = await newClient('subscriber');
  const hub = await HubWatch.open(client.token, { handshake: true });
  const started = Date.now();
  for (let i = 0; i < 600; i++) hub.send({ type: 1, invocationId: `s${i}`, target: 'SubscribeToTicks', arguments: [`SYM${i}`] });
  await until(() => hub.completion('s599') !== undefined, 20_000);
  const answeredIn = Date.now() - started;
  const completions = Array.from({ length: 600 }, (_, i) => hub.completion(`s${i}`));
  const admitted = completions.filter((c) => c && c.error === undefined && c.result === null).length;
  const bound = 'SubscribeToTicks: at most 256 symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks';
  const refused = completions.filter((c) => c?.error === bound).length;
  const otherErrors = new Set(completions.filter((c) => c?.error !== undefined && c?.error !== bound).map((c) => c!.error));
  const unanswered = completions.filter((c) => c === undefined).length;
  // Afterwards: room made, a subscription of a real symbol answered, and its ticks come.
  hub.send({ type: 1, invocationId: 'drop', target: 'UnsubscribeFromTicks', arguments: ['SYM0'] });
  hub.send({ type: 1, invocationId: 'after', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
  const answered = await until(() => hub.completion('after') !== undefined, 10_000);
  const ticking = await until(() => hub.received.some((r) => r.value.target === 'OnTick' && r.value.arguments?.[0]?.symbol === 'EURUSD'), 15_000);
  const closed = hub.closeFrameAt !== null;
  hub.terminate();
  found({
    id: '5', title: '600 SubscribeToTicks (600 symbols) on one socket',
    figures: `all answered in ${seconds(answeredIn)}: ${admitted} admitted, ${refused} refused with "${bound.split(':').slice(0, 2).join(':')}", ` +
      `${otherErrors.size ? `other errors ${[...otherErrors].join(' | ')}, ` : ''}${unanswered} unanswered; afterwards a subscription ` +
      `${answered ? `answered ${JSON.stringify(hub.completion('after'))}` : 'not answered'}, EURUSD ticks ${ticking ? 'arriving' : 'not arriving'}, socket ${closed ? 'closed' : 'open'}`,
    held: admitted === 256 && refused === 344 && unanswered === 0 && answered && hub.completion('after')?.result === null && ticking && !closed,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 6. Huge arrays, large invalid bodies, invalid UTF-8, bad framing

/** One request written byte for byte on a fresh socket; the answer's status, headers and body size. */
function rawExchange(request: string | Buffer, options: { endAfterWrite?: boolean; timeoutMs?: number } = {}): Promise<{ status: number | null; headers: Record<string, string>; bodyBytes: number; body: string }> {
  const { port } = new URL(edgeUrl);
  return new Promise((resolveAnswer) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = (split >= 0 ? all.subarray(0, split) : all).toString('latin1').split('\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body: Buffer = split >= 0 ? all.subarray(split + 4) : Buffer.alloc(0);
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolveAnswer({ status: status ? Number(status[1]) : null, headers, bodyBytes: body.length, body: body.toString('utf8') });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5000);
    socket.on('data', (d) => {
      chunks.push(d);
      // Done once a whole answer with a length is in.
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(all.subarray(0, Math.max(0, split)).toString('latin1'));
      if (split >= 0 && length && all.length >= split + 4 + Number(length[1])) finish();
      if (split >= 0 && /\r\ntransfer-encoding: *chunked/i.test(all.subarray(0, split).toString('latin1')) && all.subarray(split).includes('\r\n0\r\n\r\n')) finish();
    });
    socket.on('end', finish);
    socket.on('error', finish);
    socket.write(request, () => { if (options.endAfterWrite) socket.end(); });
  });
}

function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const nl = body.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(body.subarray(at, nl).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

async function attackInput(): Promise<void> {
  progress('6: huge arrays, large invalid bodies, invalid UTF-8, bad framing');
  const client = await newClient('framing', 'webapi webapi.write');
  const token = client.token;
  const v2 = `/api/v2/PF4/${stack.platforms.pf4}`;
  const v1 = `/api/PF4/${stack.platforms.pf4}`;
  const from = Date.now();
  const items = (n: number, item: string) => `[${`${item},`.repeat(n - 1)}${item}]`;
  type Case = { name: string; status: number | null; worker: boolean; said: string; bytes: number };
  const cases: Case[] = [];
  const said = (body: any): string => {
    if (body && typeof body === 'object') {
      if ('error' in body && body.error && typeof body.error === 'object') return `${body.error.code}: ${String(body.error.message).slice(0, 90)}`;
      if ('errorCode' in body) return `${body.errorCode}: ${String(body.errorDescription).slice(0, 90)}`;
    }
    return String(body).replace(/\s+/g, ' ').slice(0, 60);
  };
  const viaFetch = async (name: string, path: string, body: string | Uint8Array) => {
    const r = await postJson(path, token, body);
    cases.push({ name, status: r.status, worker: r.headers.has('traceparent'), said: said(r.body), bytes: r.bytes });
  };
  await viaFetch('v2 JSON array of 130,000 elements', `${v2}/UserRecordNew`, items(130_000, '1'));
  await viaFetch('v1 JSON array of 130,000 elements', `${v1}/UserRecordNew`, items(130_000, '1'));
  await viaFetch('v2 JSON array of 1,000,000 elements (2 MB)', `${v2}/UserRecordNew`, items(1_000_000, '1'));
  const invalid = `{"message":"m","logins":${items(39_000, '"xx"')}}`;
  await viaFetch(`v2 ${Math.round(invalid.length / 1000)} KB body wrong in every item`, `${v2}/NotificationsSend`, invalid);
  const name = `Drill ${randomUUID().slice(0, 6)} `;
  const notUtf8 = new Uint8Array([...Buffer.from(`{"group":"demo","name":"${name}`), 0xff, 0xfe, 0xc3, ...Buffer.from('("}')]);
  await viaFetch('v2 JSON body with invalid UTF-8', `${v2}/UserRecordNew`, notUtf8);
  await viaFetch('v1 JSON body with invalid UTF-8', `${v1}/UserRecordNew`, notUtf8);

  const head = (target: string, framing: string) =>
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nConnection: close\r\n${framing}\r\n`;
  const raw = async (label: string, request: string, options: { endAfterWrite?: boolean } = {}) => {
    const r = await rawExchange(request, options);
    let body: unknown = r.body;
    try { body = JSON.parse(r.body); } catch { /* text */ }
    cases.push({ name: label, status: r.status, worker: 'traceparent' in r.headers, said: r.status === null ? 'no answer' : said(body), bytes: r.bodyBytes });
  };
  await raw('malformed chunked body (chunk size "zz")', `${head(`${v2}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}zz\r\n{}\r\n0\r\n\r\n`);
  await raw('chunk longer than its size', `${head(`${v1}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}2\r\n{"group":"demo"}\r\n0\r\n\r\n`);
  await raw('body cut short (Content-Length 100, 15 bytes sent)', `${head(`${v2}/UserRecordNew`, 'Content-Length: 100\r\n')}{"group":"demo"`, { endAfterWrite: true });
  const workerdCases = cases.length;
  await raw('conflicting Content-Length (2 and 5)', `${head(`${v2}/UserRecordNew`, 'Content-Length: 2\r\nContent-Length: 5\r\n')}{}`);
  await raw('negative Content-Length', `${head(`${v2}/UserRecordNew`, 'Content-Length: -1\r\n')}{}`);
  await raw('unknown Transfer-Encoding (bogus)', `${head(`${v2}/UserRecordNew`, 'Transfer-Encoding: bogus\r\n')}{}`);
  await raw('absolute-form request target', `${head(`${edgeUrl}${v2}/UserRecordNew`, 'Content-Length: 2\r\n')}{}`);

  // Callers gone mid-body: nothing at error level.
  const dropped = 20;
  await Promise.all(Array.from({ length: dropped }, () => new Promise<void>((done) => {
    const socket = connect(Number(new URL(edgeUrl).port), '127.0.0.1', () => {
      socket.write(`${head(`${v2}/UserRecordNew`, 'Content-Length: 1000\r\n')}{"group":"demo","name":"`, () => setTimeout(() => { socket.destroy(); done(); }, 100));
    });
    socket.on('error', () => done());
  })));
  await sleep(1500);
  const errors = errorLinesSince(from);
  const replaced = await serverAccountsNamed(name, token);

  const line = (c: Case) => `${c.name} → ${c.status ?? 'no answer'} ${c.said} (${c.bytes.toLocaleString('en-US')} B${c.worker ? '' : ', answered by workerd, no worker trace header'})`;
  const workerAnswered = cases.filter((c) => c.worker);
  const workerd = cases.filter((c) => !c.worker);
  const largest = Math.max(...cases.slice(0, 4).map((c) => c.bytes));
  found({
    id: '6a', title: 'huge arrays, a large invalid body, invalid UTF-8, broken body framing (answered by the worker)',
    figures: `${cases.slice(0, workerdCases).map(line).join('; ')}; largest refusal ${largest.toLocaleString('en-US')} B; accounts on the trading server named "${name.trim()}…": ${replaced}; ` +
      `${dropped} callers gone mid-body; edge error-level log lines in all of it: ${errors.length}${errors.length ? ` (first: ${errors[0].line.slice(0, 160)})` : ''}`,
    held: workerAnswered.every((c) => c.status !== null && c.status < 500) && cases.slice(0, workerdCases).every((c) => c.worker) &&
      largest <= 8192 && replaced === 0 && errors.length === 0,
  });
  const readme = readFileSync(join(root, 'docs', 'operating.md'), 'utf8');
  const documented = /absolute-form/i.test(readme) && /Transfer-Encoding/i.test(readme) && /Content-Length/i.test(readme) && /Cloudflare's front/i.test(readme);
  found({
    id: '6b', title: 'framing local workerd answers before the worker runs',
    figures: `${cases.slice(workerdCases).map(line).join('; ')}; docs/operating.md ${documented ? 'says' : 'does not say'} that these are answered by ` +
      `local workerd itself and by Cloudflare's front in production`,
    held: cases.slice(workerdCases).every((c) => c.worker ? c.status !== null && c.status < 500 : documented),
  });
  if (workerd.length) progress(`6: answered by workerd itself: ${workerd.map((c) => c.name).join(', ')}`);
}

/** Accounts on the trading server whose name starts with `prefix` (read live through the gateway). */
async function serverAccountsNamed(prefix: string, token: string): Promise<number | string> {
  const r = await getJson(`/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?requestTimeout=30`, token);
  if (!Array.isArray(r.body?.data)) return `unknown (${r.status})`;
  return (r.body.data as Array<{ name: string }>).filter((u) => u.name.startsWith(prefix.trim())).length;
}

// ---------------------------------------------------------------------------------------------------------------
// 7. Another organization's platforms down

async function attackOtherOrganization(): Promise<void> {
  progress("7: another organization's platforms down");
  const db = await stack.edge.db();
  const otherOrg = randomUUID();
  const behindDeadBroker = randomUUID();
  const serverMissing = randomUUID();
  const deadPort = await freePort();
  const now = new Date().toISOString();
  await db.batch([
    db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(otherOrg, 'Drill other organization', now),
    db.prepare('INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)')
      .bind(behindDeadBroker, 'Other PF4 behind a stopped broker', 'PF4', otherOrg, `http://127.0.0.1:${deadPort}`, now),
    db.prepare('INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, NULL, ?)')
      .bind(serverMissing, 'Other PF4 without its server', 'PF4', otherOrg, now),
  ]);
  const platformsFile = join(stack.dataDir, 'broker-platforms.json');
  const original = readFileSync(platformsFile, 'utf8');
  const parsed = JSON.parse(original) as { platforms: Array<Record<string, unknown>> };
  const template = parsed.platforms[0];
  writePrivateFile(platformsFile, JSON.stringify({
    platforms: [...parsed.platforms, { ...template, id: serverMissing, server: `ws://127.0.0.1:${deadPort}/missing` }],
  }, null, 2));
  try {
    const brokerSays = async () => {
      const r = await fetch(`${stack.brokerUrl}/healthz`).catch(() => null);
      const body = await r?.json().catch(() => ({})) as { platforms?: Record<string, { up?: boolean }> } | undefined;
      return { status: r?.status ?? 0, serving: body?.platforms?.[serverMissing] !== undefined };
    };
    const deadline = Date.now() + 10_000;
    let broker = await brokerSays();
    while (!(broker.serving && broker.status === 503) && Date.now() < deadline) { await sleep(200); broker = await brokerSays(); }
    const token = await stack.token();
    const own = await getJson('/healthz', token);
    const anonymous = await getJson('/healthz');
    const shown = typeof own.body?.platforms === 'object' ? Object.keys(own.body.platforms) : [];
    const mine = [stack.platforms.pf4, stack.platforms.pf5];
    found({
      id: '7', title: "another organization's platforms down (one behind a broker not running, one on the shared broker with no server)",
      figures: `broker /healthz ${broker.status}; anonymous /healthz ${anonymous.status} broker ${anonymous.body?.broker} platforms ${anonymous.body?.platforms}; ` +
        `the first organization's authenticated /healthz ${own.status} ${own.body?.status}, platforms ${JSON.stringify(own.body?.platforms)}` +
        ` (${shown.every((p) => mine.includes(p)) && shown.length === mine.length ? 'only its own two' : 'NOT only its own'})`,
      held: broker.status === 503 && anonymous.status === 503 && own.status === 200 && shown.length === 2 && shown.every((p) => mine.includes(p)) &&
        mine.every((p) => own.body.platforms[p] === 'up'),
    });
  } finally {
    writePrivateFile(platformsFile, original);
    await db.batch([
      db.prepare('DELETE FROM trade_platforms WHERE organization_id = ?').bind(otherOrg),
      db.prepare('DELETE FROM organizations WHERE id = ?').bind(otherOrg),
    ]);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 8. A frozen simulator

async function attackFreeze(): Promise<void> {
  progress('8: the simulator frozen with SIGSTOP');
  const token = await stack.token();
  const healthy = async () => (await getJson('/healthz')).status === 200;
  const deadline = Date.now() + 20_000;
  while (!(await healthy()) && Date.now() < deadline) await sleep(250);
  const pid = stack.sim.child.pid!;
  const samples: string[] = [];
  const stoppedAt = Date.now();
  process.kill(pid, 'SIGSTOP');
  let downMs: number | null = null;
  let anonymousDownMs: number | null = null;
  let upAgainMs: number | null = null;
  try {
    while (Date.now() - stoppedAt < 20_000 && (downMs === null || anonymousDownMs === null)) {
      const [own, anonymous] = await Promise.all([getJson('/healthz', token), getJson('/healthz')]);
      const platforms = (own.body?.platforms ?? {}) as Record<string, string>;
      samples.push(`${own.status}`);
      if (downMs === null && own.status === 503 && platforms[stack.platforms.pf4] === 'down' && platforms[stack.platforms.pf5] === 'down') downMs = Date.now() - stoppedAt;
      if (anonymousDownMs === null && anonymous.status === 503 && anonymous.body?.platforms === 'down') anonymousDownMs = Date.now() - stoppedAt;
      await sleep(250);
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const continuedAt = Date.now();
  while (Date.now() - continuedAt < 30_000) {
    if (await healthy()) { upAgainMs = Date.now() - continuedAt; break; }
    await sleep(250);
  }
  const sampleEvery = 250;
  found({
    id: '8', title: `simulator frozen (SIGSTOP) (bound ${seconds(FREEZE_BOUND_MS)}, docs/operating.md, plus ${sampleEvery} ms between samples)`,
    figures: `authenticated /healthz showed both demo platforms down after ${seconds(downMs)}, anonymous /healthz 503 platforms down after ${seconds(anonymousDownMs)}; ` +
      `after SIGCONT healthy again in ${seconds(upAgainMs)}`,
    held: downMs !== null && downMs <= FREEZE_BOUND_MS + sampleEvery && anonymousDownMs !== null && anonymousDownMs <= FREEZE_BOUND_MS + sampleEvery,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 9. Password checks

async function attackPasswordChecks(): Promise<void> {
  progress('9: UserPasswordCheck with a read-only client, and 6 wrong checks of one login');
  const reader = await newClient('reader', 'webapi');
  const writer = await newClient('checker', 'webapi webapi.write');
  const users = await getJson(`/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?limit=3`, writer.token);
  const login = users.body.data[2].login as number;
  const check = async (token: string, password: string) => {
    const res = await fetch(`${edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/UserPasswordCheck/${login}`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(password),
    });
    const body = await res.json() as { data: unknown; error: { code: string; managerCode: string | number | null; message: string } | null };
    return { status: res.status, body, retryAfter: res.headers.get('retry-after'), challenge: res.headers.get('www-authenticate') };
  };
  const errorsBefore = await serverCommandErrors();
  const readOnly = await check(reader.token, 'Guess123x');
  const guesses = [];
  for (let i = 1; i <= 6; i++) guesses.push(await check(writer.token, `Wrong${i}guess`));
  const rightAfter = await check(writer.token, `demo-${login}`);
  const errorsAfter = await serverCommandErrors();
  const label = (r: Awaited<ReturnType<typeof check>>) => (r.body.error ? `${r.body.error.code}/${r.body.error.managerCode}` : `data ${String(r.body.data)}`);
  const sixth = guesses[5];
  found({
    id: '9', title: `UserPasswordCheck (login ${login})`,
    figures: `read-only client: ${readOnly.status} ${label(readOnly)} (${readOnly.challenge?.match(/error="[^"]+"/)?.[0] ?? 'no challenge'}, ${readOnly.challenge?.match(/scope="[^"]+"/)?.[0] ?? ''}); ` +
      `write client, 6 wrong checks: ${guesses.map(label).join(', ')}; the 6th with Retry-After ${sixth.retryAfter}; then the right password: ${label(rightAfter)}; ` +
      `failed commands on the trading server ${typeof errorsBefore === 'number' && typeof errorsAfter === 'number' ? `+${errorsAfter - errorsBefore}` : 'not readable'}`,
    held: readOnly.body.error?.code === 'Forbidden' && (readOnly.challenge ?? '').includes('insufficient_scope') &&
      guesses.slice(0, 5).every((g) => g.body.error?.managerCode === 'InvalidData') && sixth.body.error?.managerCode === 'TooFrequent' &&
      Number(sixth.retryAfter) >= 1 && rightAfter.body.error?.managerCode === 'TooFrequent',
  });
}

/** The sum of the broker's samples of metric `name` whose labels include `labels`; 0 when the broker does not answer. */
async function brokerSample(name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await brokerMetric(stack.brokerUrl, name, labels)) ?? 0;
}

/**
 * 10: a read-only client takes the manager session. One login repeated 18,542 times in UserRecordsRequest; three
 * bursts of 32 batch reads of every account at once; then, once another client has sent 300 mails of 65,536
 * characters and 500 of 65,536 wide ones, four unpaged MailsRequest at once and the mails read in pages. Meanwhile
 * another client writes under Idempotency-Keys without a pause: none of its writes may fail or end unknown, the
 * manager session must never drop or log in again, no edge link may be opened anew, and the flood is refused
 * "too frequent" with Retry-After (or, for what cannot be answered, Validation) instead.
 */
async function attackManagerSession(): Promise<void> {
  progress('10: a read-only client floods the manager session while another client writes under keys');
  const reader = await newClient('flood', 'webapi');
  const writer = await newClient('writer', 'webapi webapi.write');
  const v2 = `/api/v2/PF4/${stack.platforms.pf4}`;
  const accounts = (await getJson(`${v2}/UsersRequest?limit=1000`, writer.token)).body.data as Array<{ login: number; group: string }>;
  const logins = accounts.map((a) => a.login);
  const platform = { platform: stack.platforms.pf4 };
  const before = {
    reconnects: await brokerSample('broker_manager_reconnects_total', platform),
    links: await brokerSample('broker_edge_links_opened_total'),
  };
  let rssPeak = 0;
  // Sampled beside the writer, not by it: the writes are what the finding judges.
  const rssSampler = setInterval(() => {
    void brokerSample('process_resident_memory_bytes').then((rss) => { rssPeak = Math.max(rssPeak, rss); });
  }, 250);
  const writes = { ok: 0, failed: 0, unknown: 0, errors: new Map<string, number>() };
  let writing = true;
  const writer$ = (async () => {
    for (let i = 0; writing; i++) {
      const res = await fetch(`${edgeUrl}${v2}/UserRecordNew`, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json', 'idempotency-key': `drill-${randomUUID()}` },
        body: JSON.stringify({ group: accounts[0].group, name: `Drill ${i}` }),
      });
      const body = await res.json() as { error: { code: string; message: string } | null };
      if (res.headers.get('x-request-outcome') === 'unknown') writes.unknown++;
      if (body.error) {
        writes.failed++;
        writes.errors.set(body.error.message, (writes.errors.get(body.error.message) ?? 0) + 1);
      } else writes.ok++;
    }
  })();

  const repeated = await getJson(`${v2}/UserRecordsRequest?logins=${Array(18_542).fill(logins[0]).join(',')}`, reader.token);
  const bursts = { answered: 0, refused: 0, retryAfter: new Set<string>(), other: new Map<string, number>(), answerBytes: 0 };
  for (let burst = 0; burst < 3; burst++) {
    const answers = await Promise.all(Array.from({ length: 32 }, () => getJson(`${v2}/UserRecordsRequest?logins=${logins.join(',')}`, reader.token)));
    for (const a of answers) {
      if (!a.body.error) {
        bursts.answered++;
        bursts.answerBytes = Math.max(bursts.answerBytes, a.bytes);
      } else if (a.body.error.managerCode === 'TooFrequent') {
        bursts.refused++;
        bursts.retryAfter.add(a.headers.get('retry-after') ?? 'none');
      } else bursts.other.set(a.body.error.message, (bursts.other.get(a.body.error.message) ?? 0) + 1);
    }
  }

  progress('10: 800 mails of 65,536 characters (500 of them wide)');
  const mail = async (i: number) => postJson(`${v2}/MailSend`, writer.token, JSON.stringify({
    subject: `drill ${i}`, body: (i < 300 ? 'm' : '\u4e00').repeat(65_536), logins: [logins[0]],
  }));
  let mailsFailed = 0;
  for (let i = 0; i < 800; i += 4) {
    const sent = await Promise.all([0, 1, 2, 3].map((k) => mail(i + k)));
    mailsFailed += sent.filter((m) => m.body?.error).length;
  }
  const unpaged = await Promise.all(Array.from({ length: 4 }, () => getJson(`${v2}/MailsRequest`, reader.token)));
  let pages = 0;
  let paged = 0;
  let cursor: string | null = null;
  do {
    const page = await getJson(`${v2}/MailsRequest?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, reader.token);
    if (page.body.error) break;
    pages++;
    paged += page.body.data.length;
    cursor = page.body.meta.paging.hasMore ? page.body.meta.paging.nextCursor : null;
  } while (cursor);
  writing = false;
  await writer$;
  clearInterval(rssSampler);
  const after = {
    reconnects: await brokerSample('broker_manager_reconnects_total', platform),
    links: await brokerSample('broker_edge_links_opened_total'),
  };
  const unpagedCodes = countLabels(unpaged.map((u) => u.body.error?.code ?? 'ok'));
  found({
    id: '10', title: 'a read-only client floods the manager session (bound: the other client\'s keyed writes all succeed, none unknown; no session drop, no new link)',
    figures: `a login repeated 18,542 times: ${repeated.status} ${repeated.body?.error?.code ?? 'ok'} (${String(repeated.body?.error?.message ?? '').slice(0, 60)}); ` +
      `3 bursts of 32 reads of ${logins.length} accounts: ${bursts.answered} answered (at most ${bursts.answerBytes} bytes), ${bursts.refused} refused TooFrequent with Retry-After ${[...bursts.retryAfter].join('/')}` +
      `${bursts.other.size ? `, other: ${JSON.stringify(Object.fromEntries(bursts.other))}` : ''}; ` +
      `800 mails sent (${mailsFailed} failed), 4 unpaged MailsRequest at once: ${unpagedCodes}; paged: ${paged} mails in ${pages} pages; ` +
      `the other client's keyed writes meanwhile: ${writes.ok} ok, ${writes.failed} failed, ${writes.unknown} unknown${writes.errors.size ? ` ${JSON.stringify(Object.fromEntries(writes.errors))}` : ''}; ` +
      `manager reconnects +${after.reconnects - before.reconnects}, edge links opened +${after.links - before.links}; broker RSS peak ${Math.round(rssPeak / 1e6)} MB`,
    held: repeated.body?.error?.code === 'Validation' && bursts.refused > 0 && [...bursts.retryAfter].every((r) => Number(r) >= 1) && bursts.other.size === 0 &&
      writes.ok > 0 && writes.failed === 0 && writes.unknown === 0 && after.reconnects === before.reconnects && after.links === before.links &&
      mailsFailed === 0 && unpaged.every((u) => u.body.error?.code === 'Validation' || !u.body.error) && paged >= 800,
  });
}

async function serverCommandErrors(): Promise<number | null> {
  const state = await stack.control('demo-pf4', 'state').catch(() => null) as { commandErrors?: number; counters?: { commandErrors?: number } } | null;
  return state?.commandErrors ?? state?.counters?.commandErrors ?? null;
}

// ---------------------------------------------------------------------------------------------------------------

/** Polled starts, each on a fresh data folder: one sample says little about a race. */
const STARTS_POLLED = 3;

/** One start of the stack on a fresh data folder; polled from its first moment unless `polled` is false. */
async function startFresh(polled: boolean): Promise<{ describe: string; held: boolean; dataDir: string; ok: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'attack-drill-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const clientId = process.env.DEMO_CLIENT_ID ?? 'demo';
  const clientSecret = process.env.DEMO_CLIENT_SECRET ?? 'demo-secret';
  const t0 = Date.now();
  const poll = polled ? pollStartup(url, clientId, clientSecret, t0) : null;
  try {
    stack = await startStack({
      dataDir, edgePort: port, seed: 7, supervise: true,
      log: (line) => { logLines.push({ at: Date.now(), line }); if (logLines.length > 50_000) logLines.shift(); },
    });
  } catch (error) {
    await poll?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    const cause = String((error as Error).message).replace(/\u001b\[[0-9;]*m/g, '').split('\n').filter((l) => /error|fail/i.test(l)).slice(0, 2).join(' / ').slice(0, 300);
    return {
      ok: false, dataDir, held: false,
      describe: `start FAILED after ${seconds(Date.now() - t0)}: ${cause}${poll ? `; /healthz ${countLabels(poll.healthz)}; /connect/token ${countLabels(poll.token)}` : ''}`,
    };
  }
  edgeUrl = stack.edgeUrl;
  const upMs = Date.now() - t0;
  if (!poll) return { ok: true, dataDir, held: true, describe: `started unpolled in ${seconds(upMs)}` };
  await until(() => poll.firstHealthy !== null && poll.firstToken !== null, 30_000);
  await sleep(500);
  await poll.stop();
  const all = [...poll.healthz, ...poll.token, ...(poll.tokenAfterHealthy ? [poll.tokenAfterHealthy] : [])];
  return {
    ok: true, dataDir,
    describe: `/healthz ${countLabels(poll.healthz)}; /connect/token ${countLabels(poll.token)}; the stack was up (npm start's banner) at ` +
      `${seconds(upMs)}, the first /healthz 200 at ${seconds(poll.firstHealthy)}, the first token at ${seconds(poll.firstToken)}; ` +
      `a token asked for right after the first /healthz 200: ${poll.tokenAfterHealthy ?? 'not asked'}`,
    held: !all.some((l) => l.startsWith('5') && !l.startsWith('503')) && poll.tokenAfterHealthy === '200' &&
      all.filter((l) => l.startsWith('503')).every((l) => l === '503 RegistryNotReady' || l === '503 down'),
  };
}

async function main(): Promise<number> {
  const started = Date.now();
  console.log(`attack drill: fresh stacks on temporary data folders; REGISTRY_CACHE_SECONDS ${CACHE_SECONDS}, rate-limit window ${WINDOW_MS / 1000} s`);
  let dataDir: string | undefined;
  try {
    // 0. STARTS_POLLED polled starts, each on a fresh folder; the attacks run on the last one that came up (the ones
    // before it are stopped), or, if none did, on one more start, unpolled.
    const attempts: string[] = [];
    let allHeld = true;
    for (let i = 1; i <= STARTS_POLLED + 1; i++) {
      const polled = i <= STARTS_POLLED;
      if (!polled && dataDir) break;
      progress(`0: start ${i} on a fresh data folder${polled ? ', polling /healthz and /connect/token every 100 ms' : ', not polled'}`);
      if (dataDir && i <= STARTS_POLLED) {
        await stack.close();
        rmSync(dataDir, { recursive: true, force: true });
        dataDir = undefined;
      }
      const attempt = await startFresh(polled);
      attempts.push(`start ${i}${polled ? '' : ' (not polled)'}: ${attempt.describe}`);
      if (polled) allHeld &&= attempt.held;
      if (attempt.ok) dataDir = attempt.dataDir;
    }
    const failed = attempts.filter((a) => a.includes('start FAILED')).length;
    attempts.unshift(`${failed} of ${STARTS_POLLED} polled starts failed`);
    found({ id: '0', title: 'a fresh data folder polled from the first moment of the start', figures: attempts.join('. '), held: allHeld });
    if (!dataDir) throw new Error('the stack did not start');
    console.log(`stack: ${dataDir}, edge ${edgeUrl}`);

    // The paced failures need both bursts in one window; they run while the streams are watched.
    await windowWithRoom(PAUSE_MS + 15_000);
    const [, paced] = await Promise.all([attackStreams(), attackPacedFailures()]);
    await attackWrongSecrets();
    found(paced);
    await attackFlood();
    const silentReport = await attackSilentSockets();
    await attackSubscriptions();
    await attackInput();
    await attackPasswordChecks();
    await silentReport();
    await attackOtherOrganization();
    await attackManagerSession();
    await attackFreeze();
  } catch (error) {
    console.log(`drill stopped: ${(error as Error).stack ?? error}`);
    findings.push({ id: '!', title: 'drill', figures: String(error), held: false });
  } finally {
    await stack?.close().catch(() => {});
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  const held = findings.filter((f) => f.held).length;
  console.log(`${held} of ${findings.length} findings held; ${Math.round((Date.now() - started) / 1000)} s in all`);
  return held === findings.length ? 0 : 1;
}

process.exit(await main());
