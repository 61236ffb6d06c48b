/**
 * `npm run bench:stream`: many concurrent stream clients on one PF4 platform with the simulator's feed at 1,000 ticks
 * per second and trades opened through the API while it runs, through the whole stack (simulator, broker, edge in
 * workerd with the `PlatformStream` objects fanning out the platform's broker subscription).
 *
 * What each client asks for (`STREAM_MIX`):
 * - `terminal` (default): what a web terminal watches, the ticks of 3 of the platform's symbols (a different rotation
 *   for each client) and the trades;
 * - `all`: the ticks of every symbol and the trades.
 * How it connects (`STREAM_TRANSPORT`): `sse` (default, `GET …/Stream?ticks=A,B,C&trades`), `hub` (the SignalR
 * WebSocket: `SubscribeToTicks` per symbol, or `StreamTicks()` for all, and `StreamTrades()`; it asks for flow checks
 * with `EnableFlowControl()` and answers them as an `OnFlowCheck` handler does), or `mixed` (every other client of each).
 *
 * 1. Baseline: the first client's kind alone for a few seconds; its delivery latency (the tick's `lastTime`, stamped
 *    by the simulator, to the client's receipt) is the baseline.
 * 2. STREAM_CLIENTS clients (default 1,000) connect in batches; the edge's memory (RSS of the workerd process) before
 *    and after, divided by the clients, is the memory per connection.
 * 3. For STREAM_SECONDS (default 20) every client counts and times the ticks it receives, while the bench opens
 *    STREAM_TRADES_PER_SECOND trades (default 2) through the API. Expected ticks per client: what the simulator
 *    emitted in the window times the share of symbols the client asked (the feed moves a uniformly random symbol per
 *    tick); fewer delivered means conflated (a slow client gets the latest price of a symbol, not every one).
 *    Expected trades: every trade the bench opened, `Added`, at every client; none may be missing.
 *
 * Progress goes to standard error while it runs; the figures to standard output. The clients run in this process,
 * on the same machine as the stack, so their own CPU time is part of the latency measured.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, Agent, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { findOperation } from '../shared/catalog/index.js';
import { startStack } from '../launcher/stack.js';
import { percentile } from './measure.js';
import { childProcessesNamed } from './processes.js';

const CLIENTS = Number(process.env.STREAM_CLIENTS ?? 1000);
/** The event-loop monitor's timer period (its samples include it). */
const LOOP_RESOLUTION_MS = 10;
const SECONDS = Number(process.env.STREAM_SECONDS ?? 20);
const MIX = (process.env.STREAM_MIX ?? 'terminal') as 'terminal' | 'all';
const TRANSPORT = (process.env.STREAM_TRANSPORT ?? 'sse') as 'sse' | 'hub' | 'mixed';
const TRADES_PER_SECOND = Number(process.env.STREAM_TRADES_PER_SECOND ?? 2);
const TICKS_PER_SECOND = 1000;
const SYMBOLS_PER_TERMINAL = 3;
const CONNECT_TIMEOUT_MS = 15_000;
const BASELINE_SECONDS = Math.min(5, Math.max(2, SECONDS / 4));
const BATCH = 50;
if (
  !['terminal', 'all'].includes(MIX) ||
  !['sse', 'hub', 'mixed'].includes(TRANSPORT) ||
  !(CLIENTS >= 1) ||
  !(SECONDS >= 1)
) {
  throw new Error(
    'STREAM_MIX is terminal or all, STREAM_TRANSPORT sse, hub or mixed, STREAM_CLIENTS and STREAM_SECONDS at least 1',
  );
}

const progress = (line: string) => console.error(`[bench:stream ${new Date().toISOString().slice(11, 19)}] ${line}`);

function rssBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      /* gone */
    }
  }
  return total;
}

/** The tick's time at the simulator, from the text of one event (`"lastTime":"…"`). */
function tickTime(text: string, from = 0): number {
  const at = text.indexOf('"lastTime":"', from);
  if (at < 0) return Number.NaN;
  const stamp = text.slice(at + 12, text.indexOf('"', at + 12));
  // Every client receives the same few stamps (a burst of the feed shares one): parsed once, not once per client.
  let t = parsedStamps.get(stamp);
  if (t === undefined) {
    t = Date.parse(stamp);
    if (parsedStamps.size >= 256) parsedStamps.clear();
    parsedStamps.set(stamp, t);
  }
  return t;
}
const parsedStamps = new Map<string, number>();
const orderOf = (text: string): number => Number(/"order":(\d+)/.exec(text)?.[1]);
const isAdded = (text: string): boolean => text.includes('"kind":"Added"');

/** What both kinds of client count. */
abstract class Client {
  ticks = 0;
  connected = false;
  failed: string | null = null;
  latencies: number[] = [];
  recording = false;
  /** Orders of trades seen `Added` (whenever: a trade is counted if it ever arrives). */
  readonly orders = new Set<number>();
  overflowed = false;
  constructor(readonly symbols: string[] | null) {}

  protected onTick(text: string, now: number): void {
    if (!this.recording) return;
    this.ticks++;
    const t = tickTime(text);
    if (!Number.isNaN(t)) this.latencies.push(now - t);
  }

  protected onTrade(text: string): void {
    if (isAdded(text)) this.orders.add(orderOf(text));
  }

  abstract open(base: string, platform: string, token: string): Promise<void>;
  abstract close(): void;
  abstract readonly kind: 'sse' | 'hub';
}

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

/** A Server-Sent Events client over node:http (an EventSource would cost the client more CPU than the edge). */
class SseClient extends Client {
  readonly kind = 'sse';
  private res: IncomingMessage | undefined;
  private req: ReturnType<typeof httpRequest> | undefined;

  open(base: string, platform: string, token: string): Promise<void> {
    const query = `${this.symbols ? `ticks=${this.symbols.join(',')}` : 'ticks'}&trades`;
    const url = new URL(`/api/v2/PF4/${platform}/Stream?${query}`, base);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.failed = `no answer within ${CONNECT_TIMEOUT_MS} ms`;
        this.req?.destroy();
        resolve();
      }, CONNECT_TIMEOUT_MS);
      this.req = httpRequest(
        url,
        { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
        (res) => {
          clearTimeout(timer);
          if (res.statusCode !== 200) {
            this.failed = `HTTP ${res.statusCode}`;
            res.resume();
            resolve();
            return;
          }
          this.res = res;
          this.connected = true;
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            const now = Date.now();
            buffer += chunk;
            let start = 0;
            let end: number;
            while ((end = buffer.indexOf('\n\n', start)) >= 0) {
              const block = buffer.slice(start, end);
              start = end + 2;
              if (block.includes('event: ticks\n')) this.onTick(block, now);
              else if (block.includes('event: trades\n')) this.onTrade(block);
              else if (block.includes('event: overflow\n')) this.overflowed = true;
            }
            buffer = buffer.slice(start);
          });
          res.on('close', () => {
            this.connected = false;
          });
          res.on('error', () => {
            this.connected = false;
          });
          resolve();
        },
      );
      this.req.on('error', (e) => {
        clearTimeout(timer);
        this.failed ??= String(e);
        resolve();
      });
      this.req.end();
    });
  }

  close(): void {
    this.res?.destroy();
    this.req?.destroy();
  }
}

/** A SignalR hub client over a raw WebSocket (JSON protocol 1) that asks for flow checks and answers them. */
class HubClient extends Client {
  readonly kind = 'hub';
  private ws: WebSocket | undefined;

  open(base: string, platform: string, token: string): Promise<void> {
    const url = `${base.replace(/^http/, 'ws')}/hubs/pf4/v2?tradePlatform=${platform}&access_token=${token}`;
    return new Promise<void>((resolve) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      this.ws = ws;
      const timer = setTimeout(() => {
        this.failed = `no answer within ${CONNECT_TIMEOUT_MS} ms`;
        ws.terminate();
        resolve();
      }, CONNECT_TIMEOUT_MS);
      const send = (m: object) => ws.send(`${JSON.stringify(m)}\u001e`);
      ws.on('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        this.failed = `HTTP ${res.statusCode}`;
        resolve();
      });
      ws.on('error', (e) => {
        clearTimeout(timer);
        this.failed ??= String(e);
        resolve();
      });
      ws.on('close', () => {
        this.connected = false;
      });
      ws.on('open', () => {
        clearTimeout(timer);
        this.connected = true;
        send({ protocol: 'json', version: 1 });
        // Flow checks asked for, so the hub conflates for this client as soon as it falls half a second behind.
        send({ type: 1, invocationId: 'flow', target: 'EnableFlowControl', arguments: [] });
        if (this.symbols)
          for (const [i, s] of this.symbols.entries())
            send({ type: 1, invocationId: `sub${i}`, target: 'SubscribeToTicks', arguments: [s] });
        else send({ type: 4, invocationId: 'ticks', target: 'StreamTicks', arguments: [] });
        send({ type: 4, invocationId: 'trades', target: 'StreamTrades', arguments: [] });
        resolve();
      });
      ws.on('message', (data) => {
        const now = Date.now();
        for (const record of (data as Buffer).toString().split('\u001e')) {
          if (record === '') continue;
          if (record.startsWith('{"type":1,"target":"OnTick"') || record.startsWith('{"type":2,"invocationId":"ticks"'))
            this.onTick(record, now);
          else if (record.startsWith('{"type":2,"invocationId":"trades"')) this.onTrade(record);
          else if (record.startsWith('{"type":1,"invocationId":')) {
            // The hub's flow check: answered as a SignalR client's OnFlowCheck handler answers it.
            const id = JSON.parse(record).invocationId as string;
            send({ type: 3, invocationId: id, result: true });
          } else if (record.startsWith('{"type":7')) this.overflowed = true;
        }
      });
    });
  }

  close(): void {
    this.ws?.terminate();
  }
}

/** CPU seconds (user + system) the processes used so far, and per thread of the busiest one. */
function cpuSeconds(pids: number[]): { total: number; threads: number[] } {
  const tick = 100; // USER_HZ
  const read = (path: string) => {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / tick;
  };
  let total = 0;
  let threads: number[] = [];
  for (const pid of pids) {
    try {
      total += read(`/proc/${pid}/stat`);
      threads = readdirSync(`/proc/${pid}/task`).map((t) => {
        try {
          return read(`/proc/${pid}/task/${t}/stat`);
        } catch {
          return 0;
        }
      });
    } catch {
      /* gone */
    }
  }
  return { total, threads };
}

/** This process's descendants, named: `workerd` (the edge), and the simulator and broker by their entry file. */
function stackProcesses(): Array<{ pid: number; name: string }> {
  const parent = new Map<number, number>();
  const label = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      label.set(
        Number(entry),
        comm === 'workerd' ? 'edge' : /sim\/main/.test(cmd) ? 'simulator' : /broker/.test(cmd) ? 'broker' : comm,
      );
    } catch {
      /* gone */
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...parent.keys()].filter(isDescendant).map((pid) => ({ pid, name: label.get(pid) ?? '?' }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const password = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = password;
process.env.API_RATE_LIMIT ??= '1000000000';
const managers = [{ login: 1000, password }];

progress(`starting the stack (simulator with the PF4 feed at ${TICKS_PER_SECOND} ticks/s, broker, edge)...`);
const stack = await startStack({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: TICKS_PER_SECOND, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
    ],
  },
});
const clients: Client[] = [];
let baseline: Client | undefined;
try {
  const token = await stack.token();
  const base = stack.edgeUrl;
  const platform = stack.platforms.pf4;
  const workerd = childProcessesNamed('workerd');
  progress(`stack up at ${base}; edge workerd pid(s) ${workerd.join(',') || 'not found'}`);

  const api = async <T>(id: string, body: unknown): Promise<T> => {
    const op = findOperation(id)!;
    const res = await fetch(`${base}${op.path.replace('{tradePlatform}', platform)}`, {
      method: op.method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const envelope = (await res.json()) as { data: T; error: unknown };
    if (envelope.error) throw new Error(`${id}: ${JSON.stringify(envelope.error)}`);
    return envelope.data;
  };
  // The platform's symbols, as its feed names them: one all-symbols client for a moment.
  const discovery = new SseClient(null);
  const seen = new Set<string>();
  (discovery as unknown as { onTick: (text: string) => void }).onTick = (text) => {
    const m = /"symbol":"([^"]+)"/.exec(text);
    if (m) seen.add(m[1]);
  };
  await discovery.open(base, platform, token);
  for (let i = 0; i < 100 && seen.size < 12; i++) await sleep(50);
  await sleep(500);
  discovery.close();
  const symbolList = [...seen].sort();
  if (symbolList.length === 0)
    throw new Error(`no tick reached the discovery client (${discovery.failed ?? 'connected'})`);
  const symbolsOf = (i: number): string[] | null =>
    MIX === 'all'
      ? null
      : Array.from({ length: SYMBOLS_PER_TERMINAL }, (_, k) => symbolList[(i + k * 5) % symbolList.length]);
  const kindOf = (i: number): 'sse' | 'hub' => (TRANSPORT === 'mixed' ? (i % 2 === 0 ? 'sse' : 'hub') : TRANSPORT);
  const make = (i: number): Client => (kindOf(i) === 'sse' ? new SseClient(symbolsOf(i)) : new HubClient(symbolsOf(i)));
  const share = (c: Client) => (c.symbols ? c.symbols.length / symbolList.length : 1);

  // 1. The baseline: one client alone.
  baseline = make(0);
  await baseline.open(base, platform, token);
  if (baseline.failed) throw new Error(`the baseline client was refused: ${baseline.failed}`);
  await sleep(2_000); // the platform's broker subscription comes up
  baseline.recording = true;
  progress(`baseline: one ${baseline.kind} client for ${BASELINE_SECONDS} s...`);
  await sleep(BASELINE_SECONDS * 1000);
  baseline.recording = false;
  const baseLat = [...baseline.latencies].sort((a, b) => a - b);
  progress(
    `baseline: ${baseline.ticks} ticks, p50 ${percentile(baseLat, 0.5)} ms, p99 ${percentile(baseLat, 0.99)} ms`,
  );
  baseline.close();
  await sleep(1_000);

  // 2. Connect the many, in batches, measuring the edge's memory before and after.
  const rssBefore = rssBytes(workerd);
  let stalled: number | null = null;
  for (let i = 0; i < CLIENTS; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, CLIENTS - i) }, (_, k) => make(i + k));
    clients.push(...batch);
    await Promise.all(
      batch.map((c) =>
        c.open(base, platform, token).catch((e) => {
          c.failed = String(e);
        }),
      ),
    );
    if (batch.every((c) => c.failed)) {
      stalled = clients.length - batch.length;
      progress(
        `a whole batch of ${batch.length} went unanswered: the edge stopped accepting streams at ${stalled}; measuring those`,
      );
      break;
    }
    progress(
      `connected ${clients.filter((c) => c.connected).length}/${CLIENTS}, refused or unanswered ${clients.filter((c) => c.failed).length}`,
    );
  }
  await sleep(2_000);
  const rssAfter = rssBytes(workerd);
  const held = clients.filter((c) => !c.failed);

  // 3. The measured window, with trades opened through the API.
  const user = await api<{ login: number }>('v2.PF4.UserRecordNew', {
    login: 0,
    group: 'demo\\forex',
    name: 'bench-stream',
  });
  await api('v2.PF4.TradeTransaction', {
    tradeTransactionType: 'BrBalance',
    tradeCommand: 'Balance',
    orderBy: user.login,
    price: 1_000_000,
  });
  const opened: number[] = [];
  const tradeFailures: string[] = [];
  let tradeCall: Promise<void> | undefined;
  const cpuStart = cpuSeconds(workerd);
  const stackProcs = stackProcesses().filter((p) => ['simulator', 'broker'].includes(p.name));
  const stackCpuStart = stackProcs.map((p) => cpuSeconds([p.pid]).total);
  const clientCpuStart = process.cpuUsage();
  // How late this process's event loop runs: a tick read late by the clients is latency of theirs, not the edge's.
  // Its samples are the time between the monitor's own timer turns, so each holds the resolution besides the lateness.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  const emittedStart = ((await stack.control('demo-pf4', 'state')) as { ticksEmitted: number }).ticksEmitted;
  for (const c of held) c.recording = true;
  const started = Date.now();
  let nextTrade = started;
  let nextReport = started + 1000;
  while (Date.now() - started < SECONDS * 1000) {
    // One trade call at a time, not awaited here: a slow answer must not stretch the window.
    if (TRADES_PER_SECOND > 0 && Date.now() >= nextTrade && !tradeCall) {
      nextTrade += 1000 / TRADES_PER_SECOND;
      tradeCall = api<{ order: number }>('v2.PF4.TradeTransaction', {
        tradeTransactionType: 'BrOrderOpen',
        tradeCommand: 'Buy',
        orderBy: user.login,
        symbol: symbolList[opened.length % symbolList.length],
        volume: 1,
        comment: 'bench',
      })
        .then(
          (tx) => {
            opened.push(tx.order);
          },
          (error) => {
            // Not answered: not counted as opened (its event, if it comes, is not expected of anyone).
            tradeFailures.push(
              `${String(error)}${(error as { cause?: unknown }).cause ? ` (${String((error as { cause?: unknown }).cause)})` : ''}`,
            );
          },
        )
        .finally(() => {
          tradeCall = undefined;
        });
    }
    if (Date.now() >= nextReport) {
      nextReport += 1000;
      const delivered = held.reduce((n, c) => n + c.ticks, 0);
      progress(
        `${Math.round((Date.now() - started) / 1000)}/${SECONDS} s: ${delivered} ticks delivered to ${held.filter((c) => c.connected).length} clients, ${opened.length} trades opened, edge RSS ${(rssBytes(workerd) / 2 ** 20).toFixed(0)} MiB`,
      );
    }
    await sleep(20);
  }
  for (const c of held) c.recording = false;
  const cpuEnd = cpuSeconds(workerd);
  const clientCpu = process.cpuUsage(clientCpuStart);
  loopDelay.disable();
  const stackCpu = stackProcs.map(
    (p, i) =>
      `${p.name} ${((100 * (cpuSeconds([p.pid]).total - stackCpuStart[i])) / ((Date.now() - started) / 1000)).toFixed(0)}%`,
  );
  const load = loadavg()[0];
  const windowSeconds = (Date.now() - started) / 1000;
  const emitted = ((await stack.control('demo-pf4', 'state')) as { ticksEmitted: number }).ticksEmitted - emittedStart;
  const stillConnected = held.filter((c) => c.connected).length;
  await tradeCall;
  // Trades opened last may still be on their way: wait for them (bounded), then count what is missing.
  const missing = () => held.reduce((n, c) => n + opened.filter((o) => !c.orders.has(o)).length, 0);
  const waitUntil = Date.now() + 10_000;
  while (missing() > 0 && Date.now() < waitUntil) await sleep(100);

  const delivered = held.reduce((n, c) => n + c.ticks, 0);
  const expected = held.reduce((n, c) => n + emitted * share(c), 0);
  const all = held.flatMap((c) => c.latencies).sort((a, b) => a - b);
  const p50 = percentile(all, 0.5);
  const p99 = percentile(all, 0.99);
  const b50 = percentile(baseLat, 0.5);
  const b99 = percentile(baseLat, 0.99);
  const perConnection = (rssAfter - rssBefore) / Math.max(1, held.length);
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}x` : 'n/a');
  const kinds =
    TRANSPORT === 'mixed'
      ? 'SSE and hub clients (every other)'
      : TRANSPORT === 'sse'
        ? 'SSE clients'
        : 'SignalR hub clients';
  const asked =
    MIX === 'all'
      ? 'the ticks of every symbol and the trades'
      : `the ticks of ${SYMBOLS_PER_TERMINAL} of the ${symbolList.length} symbols (e.g. ${clients[0].symbols!.join(',')}; a rotation per client) and the trades`;
  const tradesExpected = opened.length * held.length;
  const tradesMissing = missing();

  console.log(
    `bench:stream  ${CLIENTS} ${kinds} on one PF4 platform, feed ${TICKS_PER_SECOND} ticks/s, ${SECONDS} s, ${TRADES_PER_SECOND} trades/s opened through the API; STREAM_SHARDS ${process.env.STREAM_SHARDS ?? 1}, STREAM_FLUSH_MS ${process.env.STREAM_FLUSH_MS ?? 10}`,
  );
  console.log(`  each asked    ${asked}`);
  console.log(
    `  connected     ${held.length} (refused or unanswered ${clients.length - held.length}${stalled !== null ? `; the edge answered no stream of a whole batch once ${stalled} were open, ${CLIENTS - clients.length} never tried` : ''}), still connected at the end ${stillConnected}, told overflow ${held.filter((c) => c.overflowed).length}`,
  );
  console.log(
    `  ticks         ${delivered} delivered / ~${Math.round(expected)} emitted for the symbols asked (${((100 * delivered) / Math.max(1, expected)).toFixed(1)}%; simulator emitted ${emitted}; below 100% = conflated: a slow client gets the latest price of a symbol)`,
  );
  console.log(
    `  trades        ${tradesExpected - tradesMissing} delivered / ${tradesExpected} expected (${opened.length} opened x ${held.length} clients), ${tradesMissing} missing`,
  );
  if (tradeFailures.length)
    console.log(
      `  trade calls   ${tradeFailures.length} not answered (not counted): ${[...new Set(tradeFailures)].slice(0, 2).join('; ')}`,
    );
  const threadCpu = cpuEnd.threads.map((t, i) => t - (cpuStart.threads[i] ?? 0)).sort((a, b) => b - a);
  console.log(
    `  edge CPU      ${((100 * (cpuEnd.total - cpuStart.total)) / windowSeconds).toFixed(0)}% of one core over the window (busiest threads ${threadCpu
      .slice(0, 3)
      .map((t) => `${((100 * t) / windowSeconds).toFixed(0)}%`)
      .join(', ')})`,
  );
  console.log(
    `  client CPU    ${((clientCpu.user + clientCpu.system) / 1e4 / windowSeconds).toFixed(0)}% of one core (this process: every client's reading and parsing)${stackCpu.length ? `; ${stackCpu.join(', ')}` : ''}; machine load ${load.toFixed(1)} on ${cpus().length} cores`,
  );
  const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS).toFixed(1);
  console.log(
    `  client lag    the clients' event loop ran late by p50 ${late(loopDelay.percentile(50))} ms, p99 ${late(loopDelay.percentile(99))} ms, max ${late(loopDelay.max)} ms`,
  );
  console.log(
    `  latency       p50 ${p50} ms, p99 ${p99} ms   (tick time at the simulator -> client receipt, ${all.length} ticks)`,
  );
  console.log(
    `  baseline      1 ${baseline.kind} client alone: p50 ${b50} ms, p99 ${b99} ms, ${baseline.ticks} ticks in ${BASELINE_SECONDS} s   ratio p50 ${ratio(p50, b50)}, p99 ${ratio(p99, b99)}`,
  );
  console.log(
    `  edge memory   workerd RSS ${(rssBefore / 2 ** 20).toFixed(1)} MiB -> ${(rssAfter / 2 ** 20).toFixed(1)} MiB, ${(perConnection / 1024).toFixed(1)} KiB per connection`,
  );
} finally {
  progress('closing clients and the stack...');
  for (const c of clients) c.close();
  baseline?.close();
  await stack.close();
}
