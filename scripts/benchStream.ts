/**
 * `npm run bench:stream`: many concurrent Server-Sent Events clients on one PF4 platform with the simulator's feed at
 * 1,000 ticks per second (all symbols), through the whole stack (simulator, broker, edge in workerd with the
 * `PlatformStream` Durable Object fanning out the platform's one broker subscription).
 *
 * 1. Baseline: one client alone for a few seconds; its delivery latency (the tick's `lastTime`, stamped by the
 *    simulator, to the client's receipt) is the baseline.
 * 2. Then STREAM_CLIENTS clients (default 1,000) connect; the edge's memory (RSS of the workerd process) before and
 *    after, divided by the clients, is the memory per connection.
 * 3. For STREAM_SECONDS (default 20) every client counts and times the ticks it receives; expected is the ticks the
 *    simulator emitted in that window (its state answer), per client. Ticks are conflated per symbol for a slow
 *    client (the latest price wins), so delivered below expected means conflation, not loss of a non-tick event.
 *
 * Progress goes to standard error while it runs; the figures to standard output. The clients run in this process,
 * on the same machine as the stack, so their own CPU time is part of the latency measured.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { startStack } from './stack.js';

const CLIENTS = Number(process.env.STREAM_CLIENTS ?? 1000);
const SECONDS = Number(process.env.STREAM_SECONDS ?? 20);
const TICKS_PER_SECOND = 1000;
const CONNECT_TIMEOUT_MS = 15_000;
const BASELINE_SECONDS = Math.min(5, Math.max(2, SECONDS / 4));

const progress = (line: string) => console.error(`[bench:stream ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** Child processes of this one named `workerd` (Miniflare spawns the edge's runtime as one). */
function workerdPids(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === 'workerd' && ppid === process.pid) found.push(Number(entry));
    } catch { /* gone */ }
  }
  return found;
}

function rssBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch { /* gone */ }
  }
  return total;
}

/** One SSE client over fetch: counts tick events and records their latency while `recording` is on. */
class Client {
  ticks = 0;
  other = 0;
  connected = false;
  failed: string | null = null;
  latencies: number[] = [];
  recording = false;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  async open(url: string, token: string): Promise<void> {
    // A stream that does not answer within CONNECT_TIMEOUT_MS counts as refused (and is abandoned).
    const timer = setTimeout(() => this.abort.abort(), CONNECT_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: this.abort.signal });
    } catch (error) {
      this.failed = this.abort.signal.aborted ? `no answer within ${CONNECT_TIMEOUT_MS} ms` : String(error);
      return;
    } finally {
      clearTimeout(timer);
    }
    if (res.status !== 200 || !res.body) {
      this.failed = `HTTP ${res.status}`;
      return;
    }
    this.connected = true;
    this.done = this.read(res.body);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        const now = Date.now();
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!this.recording) continue;
          if (block.includes('\nevent: ticks\n')) {
            this.ticks++;
            const at = block.indexOf('"lastTime":"');
            if (at >= 0) this.latencies.push(now - Date.parse(block.slice(at + 12, block.indexOf('"', at + 12))));
          } else if (block.includes('event: ')) {
            this.other++;
          }
        }
      }
    } catch { /* aborted */ }
    this.connected = false;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ticksEmitted(control: (server: string, action: string) => Promise<unknown>): Promise<number> {
  return ((await control('demo-pf4', 'state')) as { ticksEmitted: number }).ticksEmitted;
}

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
  const url = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/Stream?ticks`;
  const workerd = workerdPids();
  progress(`stack up at ${stack.edgeUrl}; edge workerd pid(s) ${workerd.join(',') || 'not found'}`);

  // 1. The baseline: one client alone.
  baseline = new Client();
  await baseline.open(url, token);
  if (baseline.failed) throw new Error(`the baseline client was refused: ${baseline.failed}`);
  await sleep(2_000); // the platform's broker subscription comes up
  baseline.recording = true;
  progress(`baseline: one client for ${BASELINE_SECONDS} s...`);
  await sleep(BASELINE_SECONDS * 1000);
  baseline.recording = false;
  const baseLat = [...baseline.latencies].sort((a, b) => a - b);
  progress(`baseline: ${baseline.ticks} ticks, p50 ${percentile(baseLat, 50)} ms, p99 ${percentile(baseLat, 99)} ms`);
  await baseline.close();
  await sleep(1_000);

  // 2. Connect the many, in batches, measuring the edge's memory before and after.
  const rssBefore = rssBytes(workerd);
  const BATCH = 50;
  let stalled: number | null = null;
  for (let i = 0; i < CLIENTS; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, CLIENTS - i) }, () => new Client());
    clients.push(...batch);
    await Promise.all(batch.map((c) => c.open(url, token).catch((e) => { c.failed = String(e); })));
    if (batch.every((c) => c.failed)) {
      // The edge answers none of a whole batch: it accepts no more streams under this load; measure those it holds.
      stalled = clients.length - batch.length;
      progress(`a whole batch of ${batch.length} went unanswered: the edge stopped accepting streams at ${stalled}; measuring those`);
      break;
    }
    progress(`connected ${clients.filter((c) => c.connected).length}/${CLIENTS}, refused or unanswered ${clients.filter((c) => c.failed).length}`);
  }
  await sleep(2_000);
  const rssAfter = rssBytes(workerd);
  const refused = clients.filter((c) => c.failed).length;

  // 3. The measured window.
  const emittedStart = await ticksEmitted(stack.control);
  for (const c of clients) c.recording = true;
  for (let s = 1; s <= SECONDS; s++) {
    await sleep(1000);
    const delivered = clients.reduce((n, c) => n + c.ticks, 0);
    progress(`${s}/${SECONDS} s: ${delivered} ticks delivered to ${clients.filter((c) => c.connected).length} clients, edge RSS ${(rssBytes(workerd) / 2 ** 20).toFixed(0)} MiB`);
  }
  for (const c of clients) c.recording = false;
  const emitted = (await ticksEmitted(stack.control)) - emittedStart;
  const stillConnected = clients.filter((c) => c.connected).length;

  const delivered = clients.reduce((n, c) => n + c.ticks, 0);
  const otherEvents = clients.reduce((n, c) => n + c.other, 0);
  const expected = emitted * (clients.length - refused);
  const all = clients.flatMap((c) => c.latencies).sort((a, b) => a - b);
  const p50 = percentile(all, 50);
  const p99 = percentile(all, 99);
  const b50 = percentile(baseLat, 50);
  const b99 = percentile(baseLat, 99);
  const perConnection = (rssAfter - rssBefore) / Math.max(1, clients.length - refused);
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}x` : 'n/a');

  console.log(`bench:stream  ${CLIENTS} SSE clients asked for (?ticks, all symbols) on one PF4 platform, feed ${TICKS_PER_SECOND} ticks/s, ${SECONDS} s`);
  console.log(`  connected     ${clients.length - refused} (refused or unanswered ${refused}${refused ? `: ${[...new Set(clients.map((c) => c.failed).filter(Boolean))].join('; ')}` : ''}), still connected at the end ${stillConnected}`);
  console.log(`  delivered     ${delivered} / expected ${expected} tick events (${((100 * delivered) / Math.max(1, expected)).toFixed(1)}%; simulator emitted ${emitted}; ticks are conflated per symbol for a slow client)`);
  if (stalled !== null) console.log(`  stalled       the edge answered no stream of a whole batch once ${stalled} were open; ${CLIENTS - clients.length} never tried`);
  console.log(`  other events  ${otherEvents} (status, overflow, resync)`);
  console.log(`  latency       p50 ${p50} ms, p99 ${p99} ms   (tick time at the simulator -> client receipt)`);
  console.log(`  baseline      1 client: p50 ${b50} ms, p99 ${b99} ms, ${baseline.ticks} ticks in ${BASELINE_SECONDS} s   ratio p50 ${ratio(p50, b50)}, p99 ${ratio(p99, b99)}`);
  console.log(`  edge memory   workerd RSS ${(rssBefore / 2 ** 20).toFixed(1)} MiB -> ${(rssAfter / 2 ** 20).toFixed(1)} MiB, ${(perConnection / 1024).toFixed(1)} KiB per connection`);
} finally {
  progress('closing clients and the stack...');
  await Promise.all(clients.map((c) => c.close()));
  await baseline?.close();
  await stack.close();
}
