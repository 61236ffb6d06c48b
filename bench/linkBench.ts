/**
 * `npm run bench:broker`: the broker's own figures, beside baselines measured in the same run between the same
 * processes, once on a demo-sized world and once on the simulator's scale world (100,000 accounts, 200,000 trades,
 * 1,000 symbols, 1,000 ticks per second, as `npm run bench:sim`).
 *
 * For each world it starts a simulator process with one PF4 server and a broker process (`linkBenchHost.ts`: the broker
 * as `broker/main.ts` starts it, plus a bare `ws` echo server), then measures:
 *   - bare `ws` echo round trips per second over one connection from this process to the broker process, with
 *     BENCH_IN_FLIGHT frames in flight, the frames being the call frames of the next step;
 *   - cached reads per second (`PF4.UserRecordGet` call frames of `shared/frames.ts`) over one edge link to the same
 *     process with the same frames in flight, the way a platform gateway object drives `/link` (goal ≥ 0.5× the echo);
 *     the echo and the cached reads alternate in rounds of about a second (BENCH_SECONDS of each in all), so both meet
 *     the same load from the rest of the machine; beside them, the broker process's CPU time per answer (user and
 *     system, from process.cpuUsage: what a call costs the broker whatever the machine does) and the machine's CPU
 *     pressure (Linux PSI: the share of the time some runnable task waited for a CPU);
 *   - freshness: a manager session of its own changes an account's comment on the simulator (`UserRecordUpdate`),
 *     and this process polls the cached read over the link until the new comment shows; the time from sending the
 *     change to the first answer that carries it (goal p99 ≤ 5 ms);
 *     beside it, when the change command's answer came back, and both processes' event-loop delay during the changes
 *     (the broker's from this host, the simulator's from its control channel);
 *   - a cached page of 1,000 trades (`PF4.TradesGet`): the first page and the last one, alternately, one at a time
 *     (goal: the last costs at most 1.5× the first);
 *   - the broker process's memory once its cache holds the world (after a full garbage collection), and its peak;
 *   - the broker's longest event-loop stall beside the edge link's heartbeat timeout (LINK_PING_TIMEOUT_MS: a link
 *     object whose `#ping` stays unanswered that long moves the platform's calls to the next broker): its event-loop
 *     delay (p99 and max) from its start until the first resync ends, then under cached reads (BENCH_IN_FLIGHT in
 *     flight) with `#ping` sent every LINK_PING_EVERY_MS on a link of its own, once steady and once while the
 *     simulator drops the manager connection and the broker resyncs the whole world again; with each, the longest
 *     `#ping` round trip.
 *
 * What one platform costs the broker (the cost of a hot standby): right after the resync, before any call, the broker's
 * memory after a full garbage collection, and its CPU time over BENCH_IDLE_SECONDS with no calls while the simulator
 * ticks at the world's rate (per tick, and as a share of a core at the world's nominal tick rate). A broker with no
 * platform, started first, is the baseline both are taken from: the figures are per platform and per cached record.
 * For the worlds of BENCH_TWO_PLATFORMS the same is measured once more with two servers of that world on one simulator
 * and both platforms on one broker, to check that the cost per platform adds up (second ÷ first ≈ 1). From these it
 * prints the platforms one broker host carries (BENCH_HOST_MB of memory with BENCH_MEMORY_BUDGET of it for the broker,
 * BENCH_HOST_CORES cores at BENCH_CPU_BUDGET): the least of two memory bounds (the caches held, and every platform
 * resyncing at once as after the broker's restart) and the CPU bound.
 *
 * With BENCH_PROFILE=<folder> the broker process's CPU is sampled during the cached reads and during the freshness
 * changes of each world; the profiles are written there (`broker-<world>-<phase>.cpuprofile`, for Chrome's DevTools)
 * and their top functions by self time printed after the figures.
 *
 * Environment: BENCH_SECONDS (5 per throughput run), BENCH_WARMUP_SECONDS (1), BENCH_IN_FLIGHT (256),
 * BENCH_CHANGES (300 freshness samples), BENCH_PAGE_REPEATS (100 of each page), BENCH_WORLDS (demo,scale),
 * BENCH_PING_TIMEOUT_MS (120000 for the scale world's manager keep-alive; 0: the broker's default), BENCH_IDLE_SECONDS
 * (10), BENCH_TWO_PLATFORMS (the worlds measured again with two platforms; default BENCH_WORLDS, `none` for none),
 * BENCH_HOST_MB (8192), BENCH_MEMORY_BUDGET (0.75), BENCH_HOST_CORES (1), BENCH_CPU_BUDGET (0.5), BENCH_HOST_READS
 * (1000: the cached reads per second each platform also takes in the last host figure), and the scale
 * world's shape as in `npm run bench:sim`: SCALE_ACCOUNTS, SCALE_TRADES, SCALE_SYMBOLS, SCALE_TICKS.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  LINK_PING_EVERY_MS,
  LINK_PING_TIMEOUT_MS,
  PING_OP,
  type CallFrame,
  type ResultFrame,
} from '../shared/frames.js';
import { startService, type Service } from '../launcher/stack.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';
import { cpuPressureUs, percentile, sortedOf } from './measure.js';
import { summarize, type CpuProfile } from './profileSummary.js';

const num = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
};
const seconds = num('BENCH_SECONDS', 5);
const warmupSeconds = num('BENCH_WARMUP_SECONDS', 1);
const inFlight = Math.max(1, Math.round(num('BENCH_IN_FLIGHT', 256)));
const changes = Math.max(1, Math.round(num('BENCH_CHANGES', 300)));
const pageRepeats = Math.max(1, Math.round(num('BENCH_PAGE_REPEATS', 100)));
/**
 * The broker's keep-alive gives the trading server 5 s to answer a ping, and the answer waits behind the whole
 * snapshot on the same socket: on a loaded machine a scale resync takes longer, the session is declared dead and the
 * resync starts over, for ever. The scale world's broker is given this much patience (0: the broker's own default).
 */
const pingTimeoutMs = num('BENCH_PING_TIMEOUT_MS', 120_000);
const profileDir = process.env.BENCH_PROFILE ? join(process.cwd(), process.env.BENCH_PROFILE) : undefined;
const profileTop = 12;
/** Profiles taken, by world and phase, printed after the figures. */
const profiles: { label: string; file: string }[] = [];
const listOf = (text: string) =>
  text
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w && w !== 'none');
const worldNames = listOf(process.env.BENCH_WORLDS ?? 'demo,scale');
const twoPlatformWorlds = listOf(process.env.BENCH_TWO_PLATFORMS ?? worldNames.join(','));
const idleSeconds = Math.max(1, num('BENCH_IDLE_SECONDS', 10));
/** The broker host the platform counts are stated for. */
const host = {
  mb: num('BENCH_HOST_MB', 8192),
  memoryBudget: num('BENCH_MEMORY_BUDGET', 0.75),
  cores: num('BENCH_HOST_CORES', 1),
  cpuBudget: num('BENCH_CPU_BUDGET', 0.5),
};
/** The cached reads per second each platform is also given in the last host figure. */
const hostReads = num('BENCH_HOST_READS', 1000);

interface World {
  accounts: number;
  trades: number;
  symbols: number;
  ticksPerSecond: number;
}
const worlds: Record<string, World> = {
  demo: { accounts: 1000, trades: 2000, symbols: 12, ticksPerSecond: 10 },
  scale: {
    accounts: num('SCALE_ACCOUNTS', 100_000),
    trades: num('SCALE_TRADES', 200_000),
    symbols: num('SCALE_SYMBOLS', 1000),
    ticksPerSecond: num('SCALE_TICKS', 1000),
  },
};
for (const w of worldNames) if (!worlds[w]) throw new Error(`BENCH_WORLDS: unknown world ${w} (demo, scale)`);
for (const w of twoPlatformWorlds)
  if (!worlds[w]) throw new Error(`BENCH_TWO_PLATFORMS: unknown world ${w} (demo, scale)`);

const PAGE = 1000;
const SERVER = 'bench-pf4';
const PASSWORD = randomBytes(18).toString('base64url');
const LINK_SECRET = randomBytes(32).toString('base64url');
const PLATFORM = randomUUID();

/** One WebSocket carrying numbered frames answered by id: an edge link, or the echo that answers a frame with itself. */
class FrameLink {
  private nextId = 1;
  private readonly waiting = new Map<number, (frame: ResultFrame) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString()) as ResultFrame | { hello: unknown };
      if (!('id' in frame)) return; // the broker's hello
      const done = this.waiting.get(frame.id);
      this.waiting.delete(frame.id);
      done?.(frame);
    });
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<FrameLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
      ws.once('open', () => resolve(new FrameLink(ws)));
      ws.once('error', reject);
    });
  }

  call(op: string, args: Record<string, unknown>): Promise<ResultFrame> {
    const id = this.nextId++;
    const frame: CallFrame = {
      id,
      platform: PLATFORM,
      op,
      args,
      timeoutMs: 10_000,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    };
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify(frame));
    });
  }

  async ok(op: string, args: Record<string, unknown>): Promise<Extract<ResultFrame, { ok: true }>> {
    const answer = await this.call(op, args);
    if (!answer.ok) throw new Error(`${op} failed: ${JSON.stringify(answer.error)}`);
    return answer;
  }

  close(): void {
    this.ws.terminate();
  }
}

interface Throughput {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** `inFlight` calls kept outstanding on one link for `durationS`. */
/** What closed-loop runs of one kind measured, added up over rounds. */
interface Tally {
  latencies: number[];
  failures: number;
  seconds: number;
  cpuMicros: number;
  pressureUs: number;
}
const tally = (): Tally => ({ latencies: [], failures: 0, seconds: 0, cpuMicros: 0, pressureUs: 0 });

function figuresOf(t: Tally): Measured {
  const sorted = sortedOf(t.latencies);
  const perSecond = t.latencies.length / t.seconds;
  return {
    perSecond,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    failures: t.failures,
    cpuMicros: t.cpuMicros / t.latencies.length,
    pressure: t.pressureUs / (t.seconds * 1e6),
  };
}

/** `inFlight` calls kept outstanding on one link for `durationS`, added to `into`. */
async function closedLoop(
  link: FrameLink,
  op: string,
  args: Record<string, unknown>,
  check: (f: ResultFrame) => boolean,
  durationS: number,
  into = tally(),
): Promise<Tally> {
  const { latencies } = into;
  const started = performance.now();
  const end = started + durationS * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const answer = await link.call(op, args);
        latencies.push(performance.now() - t0);
        if (!check(answer)) into.failures++;
      }
    }),
  );
  into.seconds += (performance.now() - started) / 1000;
  return into;
}

/** A throughput run with the broker's CPU time per answer (µs) and the machine's CPU pressure (0–1) during it. */
type Measured = Throughput & { cpuMicros: number; pressure: number };

/** The broker's event-loop delay (ms) over a window, and the longest `#ping` round trip meanwhile (ms). */
interface Stall {
  p99: number;
  max: number;
  gcMax: number;
  gcTotal: number;
  turnWallMax: number;
  turnCpuMax: number;
  pingMax?: number;
  pings?: number;
  seconds?: number;
  pressure?: number;
}

interface Figures {
  world: string;
  resyncSeconds: number;
  /** From the broker's start to its first full cache, no calls; under cached reads, steady; the same resyncing again. */
  stalls: { start: Stall; steady: Stall; resync: Stall };
  keepAliveLosses: number;
  /** The platform on its broker with no call yet. */
  standby: Standby;
  echo: Measured;
  cached: Measured;
  freshP50: number;
  freshP99: number;
  freshMax: number;
  changeAnswerP50: number;
  changeAnswerP99: number;
  loopDuringChanges: { broker: { p99: number; max: number }; sim: { p99: number; max: number }; pressure: number };
  firstPageP50: number;
  firstPageP99: number;
  lastPageP50: number;
  lastPageP99: number;
  pages: number;
  rssMB: number;
  heapUsedMB: number;
  peakRssMB: number;
  cacheRecords: number;
  frameBytes: { call: number; answer: number };
  /** Heap bytes per cached record of accounts, trades and symbols: as kept, as objects, as objects and their JSON. */
  kinds: Record<string, KindHeap>;
}

/** The broker host's `/kinds` figures of one table. */
interface KindHeap {
  records: number;
  kept: number;
  objects: number;
  objectsWithJson: number;
}

/** The tables whose heap per record is printed, by their names in the cache (PF4). */
const KIND_TABLES = [
  ['accounts', 'users'],
  ['trades', 'trades'],
  ['symbols', 'symbols'],
] as const;

function peakRssMB(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  return kb / 1024;
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The broker host's `/status`: readiness, cache sizes, memory, CPU time and, with `loop`, event-loop delay. */
interface HostStatus {
  ready: boolean;
  sizes: Record<string, Record<string, number>>;
  memory: { rssMB: number; heapUsedMB: number; heapLimitMB: number };
  cpuMicros: number;
  /** With the garbage collector's longest pause and the pauses' sum over the same time. */
  loopDelayMs?: Stall;
  /** Present once every cache holds its first snapshot: the delay from the host's start until then. */
  startLoopDelayMs?: Stall;
  resyncs: Record<string, number>;
}

/** A simulator with some servers of one world and a broker host serving each as a platform, its cache full. */
interface Running {
  sim?: Service;
  broker: Service;
  echoPort: number;
  /** The platforms served, the first being PLATFORM on SERVER. */
  platforms: string[];
  resyncSeconds: number;
  /** The broker's event-loop delay from its start until every cache held its first snapshot. */
  startLoop: Stall;
  keepAliveLosses(): number;
  status: (gc?: boolean, loop?: boolean) => Promise<HostStatus>;
  /** Quotes the simulator emitted so far, over all its servers. */
  ticksEmitted(): Promise<number>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `count` servers of `world` on one simulator and one broker host serving them all, and waits until every
 * cache holds its world. With no server there is no simulator: the broker serves an empty platform file.
 */
async function startWorld(name: string, world: World, count: number, dir: string): Promise<Running> {
  const servers = Array.from({ length: count }, (_, i) => (i === 0 ? SERVER : `${SERVER}-${i + 1}`));
  const platforms = servers.map((_, i) => (i === 0 ? PLATFORM : randomUUID()));
  const tag = `${name}-${count}`;
  let sim: Service | undefined;
  if (count > 0) {
    const configPath = join(dir, `sim-${tag}.json`);
    writeFileSync(
      configPath,
      JSON.stringify({
        seed: 7,
        servers: servers.map((server) => ({
          name: server,
          family: 'PF4',
          ...world,
          managers: [
            { login: 1000, password: PASSWORD },
            { login: 1001, password: PASSWORD },
          ],
        })),
      }),
    );
    say(
      `[${name}] starting the simulator (${count} × ${world.accounts} accounts, ${world.trades} trades, ${world.symbols} symbols, ${world.ticksPerSecond} ticks/s)...`,
    );
    sim = await startService('sim', 'sim/main.ts', { SIM_PORT: '0', SIM_CONFIG: configPath }, () => {}, 600_000);
  }
  let broker: Service | undefined;
  try {
    const platformsFile = join(dir, `platforms-${tag}.json`);
    writeFileSync(
      platformsFile,
      JSON.stringify({
        platforms: servers.map((server, i) => ({
          id: platforms[i],
          family: 'PF4',
          server: `ws://127.0.0.1:${sim!.port}/${server}`,
          login: 1000,
          passwordEnv: 'BENCH_MANAGER_PASSWORD',
        })),
      }),
      { mode: 0o600 },
    );
    let echoPort = 0;
    // The broker logs warnings and errors only; the last few are shown if its cache never gets ready.
    const brokerLog: string[] = [];
    let keepAliveLosses = 0;
    const brokerStart = performance.now();
    const env: Record<string, string> = {
      BROKER_SECRET: LINK_SECRET,
      BROKER_PLATFORMS_FILE: platformsFile,
      BENCH_MANAGER_PASSWORD: PASSWORD,
    };
    if (name === 'scale' && pingTimeoutMs > 0) env.BENCH_PING_TIMEOUT_MS = String(pingTimeoutMs);
    broker = await startService('broker', 'bench/linkBenchHost.ts', env, (line) => {
      const ready = /"echoPort":(\d+)/.exec(line);
      if (ready) echoPort = Number(ready[1]);
      if (line.includes('keep-alive ping not answered, reconnecting')) keepAliveLosses++;
      brokerLog.push(line);
      if (brokerLog.length > 20) brokerLog.shift();
      if (process.env.BENCH_LOG) say(line);
    });
    const status = async (gc = false, loop = false) =>
      (
        await fetch(`http://127.0.0.1:${echoPort}/status?gc=${gc ? 1 : 0}&loop=${loop ? 1 : 0}`)
      ).json() as Promise<HostStatus>;
    if (count > 0) {
      say(`[${name}] waiting for the broker's cache${count > 1 ? 's' : ''} to hold the world...`);
      const until = Date.now() + 600_000;
      while (!(await status()).ready) {
        if (Date.now() > until)
          throw new Error(`the broker cache did not resync within 10 minutes; broker log:\n${brokerLog.join('\n')}`);
        await sleep(250);
      }
    }
    const resyncSeconds = (performance.now() - brokerStart) / 1000;
    let startLoop = (await status()).startLoopDelayMs;
    for (let tries = 0; !startLoop && tries < 100; tries++) {
      await sleep(20);
      startLoop = (await status()).startLoopDelayMs;
    }
    if (!startLoop) throw new Error('the broker host reported no event-loop delay for its start');
    const started = broker;
    return {
      sim,
      broker,
      echoPort,
      platforms,
      resyncSeconds,
      startLoop,
      keepAliveLosses: () => keepAliveLosses,
      status,
      ticksEmitted: async () => {
        let ticks = 0;
        for (const server of servers) {
          ticks += (
            (await (await fetch(`http://127.0.0.1:${sim!.port}/control/${server}/state`)).json()) as {
              ticksEmitted: number;
            }
          ).ticksEmitted;
        }
        return ticks;
      },
      stop: async () => {
        await started.stop();
        await sim?.stop();
      },
    };
  } catch (error) {
    await broker?.stop();
    await sim?.stop();
    throw error;
  }
}

/** What the broker holds and spends for its platforms with no call: the cost of hot standbys. */
interface Standby {
  platforms: number;
  /** Cached records over all its platforms. */
  records: number;
  /** After a full garbage collection. */
  rssMB: number;
  heapMB: number;
  /** The process's peak, reached during the resync. */
  peakRssMB: number;
  /** V8's heap limit in the broker process (its default depends on the machine's memory). */
  heapLimitMB: number;
  /** The broker's CPU time over the idle window, as a share of one core, and per quote the simulator emitted. */
  cpuShare: number;
  ticksPerSecond: number;
  seconds: number;
}

/** The broker's memory after a full GC and its CPU over `idleSeconds` with no calls, the simulator ticking. */
async function standbyOf(run: Running): Promise<Standby> {
  await run.status(true);
  await sleep(2000);
  const cpuBefore = (await run.status()).cpuMicros;
  const ticksBefore = await run.ticksEmitted();
  const started = performance.now();
  await sleep(idleSeconds * 1000);
  const cpuMicros = (await run.status()).cpuMicros - cpuBefore;
  const ticks = (await run.ticksEmitted()) - ticksBefore;
  const seconds = (performance.now() - started) / 1000;
  const after = await run.status(true);
  return {
    platforms: run.platforms.length,
    records: Object.values(after.sizes).reduce((n, sizes) => n + Object.values(sizes).reduce((a, b) => a + b, 0), 0),
    rssMB: after.memory.rssMB,
    heapMB: after.memory.heapUsedMB,
    peakRssMB: peakRssMB(run.broker.child.pid!),
    heapLimitMB: after.memory.heapLimitMB,
    cpuShare: cpuMicros / (seconds * 1e6),
    ticksPerSecond: ticks / seconds,
    seconds,
  };
}

/** The hot-standby figures of a broker serving `count` platforms of `world` (0: no platform, the baseline). */
async function standbyRun(name: string, world: World, count: number, dir: string): Promise<Standby> {
  const run = await startWorld(name, world, count, dir);
  try {
    say(`[${name}] ${count} platform${count === 1 ? '' : 's'} on one broker, no calls: ${idleSeconds} s...`);
    return await standbyOf(run);
  } finally {
    await run.stop();
  }
}

async function measure(name: string, world: World, dir: string): Promise<Figures> {
  const run = await startWorld(name, world, 1, dir);
  const { sim, broker, echoPort, status, resyncSeconds } = run;
  const links: FrameLink[] = [];
  let manager: ManagerClient | undefined;
  try {
    /** The simulator's event-loop delay since the previous call (its control channel's state). */
    const simLoop = async () => {
      const state = (await (await fetch(`http://127.0.0.1:${sim!.port}/control/${SERVER}/state`)).json()) as {
        process: Record<string, number>;
      };
      return { p99: state.process.eventLoopDelayP99Ms, max: state.process.eventLoopDelayMaxMs };
    };
    // The hot standby first: the cache full, no call yet.
    say(`[${name}] the platform on its broker, no calls: ${idleSeconds} s...`);
    const standby = await standbyOf(run);
    /** Runs `phase` with the broker's CPU sampled when BENCH_PROFILE asks for it. */
    const profiled = async <T>(phase: string, body: () => Promise<T>): Promise<T> => {
      if (!profileDir) return body();
      const post = async (path: string) => {
        const res = await fetch(`http://127.0.0.1:${echoPort}${path}`, { method: 'POST' });
        if (!res.ok) throw new Error(`broker profile: ${res.status} ${await res.text()}`);
      };
      const file = join(profileDir, `broker-${name}-${phase}.cpuprofile`);
      await post('/profile/start');
      try {
        return await body();
      } finally {
        await post(`/profile/stop?to=${encodeURIComponent(file)}`);
        profiles.push({ label: `${name}, ${phase}`, file });
      }
    };
    const cacheRecords = standby.records;

    // Stalls: the broker's event loop under cached reads, with a link object's heartbeat beside them, steady and while
    // it resyncs the whole world after the simulator dropped its manager connection.
    const stallLink = await FrameLink.open(`ws://127.0.0.1:${broker.port}/link`, {
      authorization: `Bearer ${LINK_SECRET}`,
    });
    const pinged = await FrameLink.open(`ws://127.0.0.1:${broker.port}/link`, {
      authorization: `Bearer ${LINK_SECRET}`,
    });
    links.push(stallLink, pinged);
    const someLogin = ((await stallLink.ok('PF4.TradesGet', { limit: 1 })).data as { login: number }[])[0].login;
    const anyRecord = (f: ResultFrame) => f.ok;
    /** Cached reads and heartbeats until `done` resolves; the broker's loop delay and the `#ping` round trips meanwhile. */
    const stallWindow = async (done: Promise<void>): Promise<Stall> => {
      await status(false, true);
      const started = performance.now();
      const pressureBefore = cpuPressureUs();
      const pings: Promise<number>[] = [];
      const heartbeat = setInterval(() => {
        const t0 = performance.now();
        pings.push(pinged.call(PING_OP, {}).then(() => performance.now() - t0));
      }, LINK_PING_EVERY_MS);
      let reading = true;
      const reads = (async () => {
        while (reading) await closedLoop(stallLink, 'PF4.UserRecordGet', { login: someLogin }, anyRecord, 0.5);
      })();
      try {
        await done;
      } finally {
        reading = false;
        clearInterval(heartbeat);
        await reads;
      }
      const loopDelay = (await status(false, true)).loopDelayMs!;
      const times = await Promise.all(pings);
      const elapsed = performance.now() - started;
      return {
        ...loopDelay,
        pingMax: Math.max(0, ...times),
        pings: times.length,
        seconds: elapsed / 1000,
        pressure: (cpuPressureUs() - pressureBefore) / (elapsed * 1000),
      };
    };
    say(
      `[${name}] event-loop stalls under cached reads with heartbeats: steady ${seconds} s, then a resync after a dropped manager connection...`,
    );
    const steadyStall = await stallWindow(sleep(seconds * 1000).then(() => {}));
    const resyncsBefore = (await status()).resyncs[PLATFORM] ?? 0;
    const resyncStall = await stallWindow(
      (async () => {
        const dropped = await fetch(`http://127.0.0.1:${sim!.port}/control/${SERVER}/drop`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        if (!dropped.ok) throw new Error(`the simulator's drop answered ${dropped.status}: ${await dropped.text()}`);
        const until = Date.now() + 600_000;
        while (((await status()).resyncs[PLATFORM] ?? 0) <= resyncsBefore) {
          if (Date.now() > until)
            throw new Error('the broker did not resync within 10 minutes of the dropped connection');
          await sleep(100);
        }
      })(),
    );
    const stalls = { start: run.startLoop, steady: steadyStall, resync: resyncStall };

    const link = await FrameLink.open(`ws://127.0.0.1:${broker.port}/link`, { authorization: `Bearer ${LINK_SECRET}` });
    const echo = await FrameLink.open(`ws://127.0.0.1:${echoPort}/`);
    links.push(link, echo);
    const firstPage = await link.ok('PF4.TradesGet', { limit: PAGE });
    // An account with an open trade: it exists on every world.
    const login = (firstPage.data as { login: number }[])[0].login;
    const readArgs = { login };
    const isRecord = (f: ResultFrame) => f.ok && (f.data as { login?: number }).login === login;
    const sample = await link.ok('PF4.UserRecordGet', readArgs);
    const frameBytes = {
      call: JSON.stringify({
        id: 1,
        platform: PLATFORM,
        op: 'PF4.UserRecordGet',
        args: readArgs,
        timeoutMs: 10_000,
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      }).length,
      answer: JSON.stringify(sample).length,
    };

    // Throughput: the echo and the cached read, each warmed, measured with the same frames in flight.
    say(
      `[${name}] ws echo and cached reads over one link, ${inFlight} in flight: ${2 * (warmupSeconds + seconds)} s...`,
    );
    // The two alternate in rounds of about a second, so both meet the same load from the rest of the machine.
    const isEcho = (f: ResultFrame) => (f as unknown as CallFrame).op === 'PF4.UserRecordGet';
    await closedLoop(echo, 'PF4.UserRecordGet', readArgs, isEcho, warmupSeconds);
    await closedLoop(link, 'PF4.UserRecordGet', readArgs, isRecord, warmupSeconds);
    const rounds = Math.max(1, Math.round(seconds));
    const echoTally = tally();
    const cachedTally = tally();
    for (let round = 0; round < rounds; round++) {
      for (const [over, check, into] of [
        [echo, isEcho, echoTally],
        [link, isRecord, cachedTally],
      ] as const) {
        // The broker process's CPU time (user and system) and the machine's CPU pressure during the round.
        const cpuBefore = (await status()).cpuMicros;
        const pressureBefore = cpuPressureUs();
        await closedLoop(over, 'PF4.UserRecordGet', readArgs, check, seconds / rounds, into);
        into.pressureUs += cpuPressureUs() - pressureBefore;
        into.cpuMicros += (await status()).cpuMicros - cpuBefore;
      }
    }
    const echoRun = figuresOf(echoTally);
    const cachedRun = figuresOf(cachedTally);
    // Profiled apart from the measured rounds, so the profiler's cost is in no figure.
    if (profileDir) await profiled('cached', () => closedLoop(link, 'PF4.UserRecordGet', readArgs, isRecord, seconds));

    // Freshness: a change on the server, then the cached read polled over the link until it carries the change.
    say(`[${name}] freshness: ${changes} account changes...`);
    const changer = await ManagerClient.connect(sim!.port, SERVER);
    manager = changer;
    await changer.ok('login', { login: 1001, password: PASSWORD, pump: false });
    const fresh: number[] = [];
    const changeAnswers: number[] = [];
    await status(false, true);
    await simLoop();
    const pressureBefore = cpuPressureUs();
    const changesStarted = performance.now();
    await profiled('freshness', async () => {
      for (let i = 0; i < changes; i++) {
        const comment = `bench ${i} ${randomBytes(4).toString('hex')}`;
        const t0 = performance.now();
        const answered = changer
          .ok('UserRecordUpdate', { login, record: { comment } })
          .then(() => changeAnswers.push(performance.now() - t0));
        for (;;) {
          const answer = await link.call('PF4.UserRecordGet', readArgs);
          if (answer.ok && (answer.data as { comment?: string }).comment === comment) break;
          if (performance.now() - t0 > 10_000) throw new Error(`change ${i} not visible through the cache within 10 s`);
        }
        fresh.push(performance.now() - t0);
        await answered;
      }
    });

    const pressureDuringChanges = (cpuPressureUs() - pressureBefore) / ((performance.now() - changesStarted) * 1000);
    const loopDuringChanges = {
      broker: (await status(false, true)).loopDelayMs!,
      sim: await simLoop(),
      pressure: pressureDuringChanges,
    };

    // Pages: walk to the last page once, then read the first and the last alternately.
    say(`[${name}] cached pages of ${PAGE} trades: first and last, ${pageRepeats} times each...`);
    let cursor: string | undefined;
    let lastCursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await link.ok('PF4.TradesGet', cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor });
      pages++;
      if (!page.paging?.hasMore || !page.paging.nextCursor) break;
      lastCursor = page.paging.nextCursor;
      cursor = lastCursor;
    }
    const firstTimes: number[] = [];
    const lastTimes: number[] = [];
    for (let i = 0; i < pageRepeats; i++) {
      for (const [args, into] of [
        [{ limit: PAGE }, firstTimes],
        [{ limit: PAGE, cursor: lastCursor }, lastTimes],
      ] as const) {
        const t0 = performance.now();
        const page = await link.ok('PF4.TradesGet', lastCursor === undefined ? { limit: PAGE } : args);
        into.push(performance.now() - t0);
        if (!Array.isArray(page.data)) throw new Error('TradesGet answered no list');
      }
    }

    const memory = (await status(true)).memory;
    const peakRss = peakRssMB(broker.child.pid!);
    // Last (after the peak is read): the host builds copies of the tables to weigh them.
    const kinds =
      (
        (await (
          await fetch(`http://127.0.0.1:${echoPort}/kinds?kinds=${KIND_TABLES.map(([, t]) => t).join(',')}`)
        ).json()) as Record<string, Record<string, KindHeap>>
      )[PLATFORM] ?? {};
    const freshSorted = sortedOf(fresh);
    const first = sortedOf(firstTimes);
    const last = sortedOf(lastTimes);
    return {
      world: name,
      resyncSeconds,
      stalls,
      keepAliveLosses: run.keepAliveLosses(),
      standby,
      echo: echoRun,
      cached: cachedRun,
      freshP50: percentile(freshSorted, 0.5),
      freshP99: percentile(freshSorted, 0.99),
      freshMax: freshSorted[freshSorted.length - 1],
      changeAnswerP50: percentile(sortedOf(changeAnswers), 0.5),
      changeAnswerP99: percentile(sortedOf(changeAnswers), 0.99),
      loopDuringChanges,
      firstPageP50: percentile(first, 0.5),
      firstPageP99: percentile(first, 0.99),
      lastPageP50: percentile(last, 0.5),
      lastPageP99: percentile(last, 0.99),
      pages,
      rssMB: memory.rssMB,
      heapUsedMB: memory.heapUsedMB,
      peakRssMB: peakRss,
      cacheRecords,
      frameBytes,
      kinds,
    };
  } finally {
    manager?.close();
    for (const link of links) link.close();
    await run.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'broker-bench-'));
if (profileDir) mkdirSync(profileDir, { recursive: true });
try {
  const empty = await standbyRun('empty', worlds.demo, 0, dir);
  const results: Figures[] = [];
  for (const name of worldNames) results.push(await measure(name, worlds[name], dir));
  const pairs = new Map<string, Standby>();
  for (const name of worldNames.filter((w) => twoPlatformWorlds.includes(w)))
    pairs.set(name, await standbyRun(name, worlds[name], 2, dir));

  const pct = (share: number) => (Number.isFinite(share) ? `${(share * 100).toFixed(0)} %` : '-');
  const x = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '-');
  const rows: [string, (f: Figures) => string][] = [
    ['cache records held', (f) => String(f.cacheRecords)],
    ['broker start to a full cache, s', (f) => f.resyncSeconds.toFixed(1)],
    ['  keep-alive losses during the resync', (f) => String(f.keepAliveLosses)],
    [`broker event-loop stall ÷ heartbeat timeout (${LINK_PING_TIMEOUT_MS} ms)`, () => ''],
    ...(
      [
        ['  start and first resync, no calls', 'start'],
        ['  cached reads, steady', 'steady'],
        ['  cached reads, resyncing after a drop', 'resync'],
      ] as const
    ).flatMap(([label, key]): [string, (f: Figures) => string][] => [
      [`${label}: p99 / max, ms`, (f) => `${f.stalls[key].p99.toFixed(1)} / ${f.stalls[key].max.toFixed(1)}`],
      ['    max ÷ timeout', (f) => x(f.stalls[key].max, LINK_PING_TIMEOUT_MS)],
      [
        '    GC pauses: longest / sum, ms',
        (f) => `${f.stalls[key].gcMax.toFixed(1)} / ${f.stalls[key].gcTotal.toFixed(0)}`,
      ],
      [
        '    longest turn (drift probe): wall / CPU, ms',
        (f) => `${f.stalls[key].turnWallMax.toFixed(1)} / ${f.stalls[key].turnCpuMax.toFixed(1)}`,
      ],
      ...(key === 'start'
        ? []
        : [
            [
              `    #ping every ${LINK_PING_EVERY_MS} ms: slowest, ms (pings; s)`,
              (f: Figures) => {
                const s = f.stalls[key];
                return `${s.pingMax!.toFixed(1)} (${s.pings}; ${s.seconds!.toFixed(1)})`;
              },
            ] as [string, (f: Figures) => string],
            ['    machine CPU pressure', (f: Figures) => pct(f.stalls[key].pressure!)] as [
              string,
              (f: Figures) => string,
            ],
          ]),
    ]),
    [`ws echo round trips/s (${inFlight} in flight)`, (f) => f.echo.perSecond.toFixed(0)],
    ['cached reads/s over one edge link', (f) => f.cached.perSecond.toFixed(0)],
    ['  bytes: call frame (echoed) / cached answer', (f) => `${f.frameBytes.call} / ${f.frameBytes.answer}`],
    ['  ratio to the echo (goal ≥ 0.5×)', (f) => x(f.cached.perSecond, f.echo.perSecond)],
    ['  machine CPU pressure: echo / cached', (f) => `${pct(f.echo.pressure)} / ${pct(f.cached.pressure)}`],
    [
      '  broker CPU per answer, µs: echo / cached',
      (f) => `${f.echo.cpuMicros.toFixed(1)} / ${f.cached.cpuMicros.toFixed(1)}`,
    ],
    ['  echo p50 / p99, ms', (f) => `${f.echo.p50.toFixed(2)} / ${f.echo.p99.toFixed(2)}`],
    ['  cached read p50 / p99, ms', (f) => `${f.cached.p50.toFixed(2)} / ${f.cached.p99.toFixed(2)}`],
    [
      'freshness p50 / p99 / max, ms (goal p99 ≤ 5)',
      (f) => `${f.freshP50.toFixed(2)} / ${f.freshP99.toFixed(2)} / ${f.freshMax.toFixed(2)}`,
    ],
    [
      '  the change command answered, p50 / p99 ms',
      (f) => `${f.changeAnswerP50.toFixed(2)} / ${f.changeAnswerP99.toFixed(2)}`,
    ],
    ['  machine CPU pressure during the changes', (f) => pct(f.loopDuringChanges.pressure)],
    [
      '  event-loop delay p99 / max, ms: broker',
      (f) => `${f.loopDuringChanges.broker.p99.toFixed(2)} / ${f.loopDuringChanges.broker.max.toFixed(2)}`,
    ],
    [
      '                               simulator',
      (f) => `${f.loopDuringChanges.sim.p99.toFixed(2)} / ${f.loopDuringChanges.sim.max.toFixed(2)}`,
    ],
    [
      `first page of ${PAGE} trades p50 / p99, ms`,
      (f) => `${f.firstPageP50.toFixed(2)} / ${f.firstPageP99.toFixed(2)}`,
    ],
    ['last page p50 / p99, ms', (f) => `${f.lastPageP50.toFixed(2)} / ${f.lastPageP99.toFixed(2)}`],
    ['  last / first at p50 (goal ≤ 1.5×)', (f) => `${x(f.lastPageP50, f.firstPageP50)} (${f.pages} pages)`],
    ['broker memory after GC: rss / heap, MB', (f) => `${f.rssMB.toFixed(0)} / ${f.heapUsedMB.toFixed(0)}`],
    ['broker peak rss, MB', (f) => f.peakRssMB.toFixed(0)],
    ['heap per cached record, bytes: as kept / as objects / objects and JSON', () => ''],
    ...KIND_TABLES.map(
      ([label, table]) =>
        [
          `  ${label}`,
          (f: Figures) => {
            const k = f.kinds[table];
            return k
              ? `${k.kept.toFixed(0)} / ${k.objects.toFixed(0)} / ${k.objectsWithJson.toFixed(0)} (${x(k.kept, k.objectsWithJson)}; ${k.records} records)`
              : '-';
          },
        ] as [string, (f: Figures) => string],
    ),
  ];

  // What one platform costs its broker: a broker serving it beside the empty broker, per platform it serves.
  const perPlatform = (s: Standby, world: string) => {
    const cpuShare = Math.max(0, s.cpuShare - empty.cpuShare);
    const microsPerTick = s.ticksPerSecond > 0 ? (cpuShare * 1e6) / s.ticksPerSecond : Number.NaN;
    return {
      rssMB: (s.rssMB - empty.rssMB) / s.platforms,
      heapMB: (s.heapMB - empty.heapMB) / s.platforms,
      peakRssMB: (s.peakRssMB - empty.peakRssMB) / s.platforms,
      microsPerTick,
      /** A share of one core at the world's nominal tick rate, whatever rate the simulator reached here. */
      cpuShare: (microsPerTick * worlds[world].ticksPerSecond) / 1e6,
    };
  };
  const one = (f: Figures) => perPlatform(f.standby, f.world);
  const two = (f: Figures) => {
    const s = pairs.get(f.world);
    return s && perPlatform(s, f.world);
  };
  /** The second platform's cost beside the first's (≈ 1 when the cost per platform adds up; '-' below resolution). */
  const second = (f: Figures, key: 'rssMB' | 'heapMB' | 'microsPerTick') => {
    const pair = two(f);
    const added = pair ? 2 * pair[key] - one(f)[key] : Number.NaN;
    return added > 0 ? x(added, one(f)[key]) : '-';
  };
  /** A platform in use: after the reads and the walk over every page, its records' JSON text held too. */
  const inUse = (f: Figures) => ({ rssMB: f.rssMB - empty.rssMB, heapMB: f.heapUsedMB - empty.heapMB });
  /** The cost the host figures count per platform: the largest of the standby runs' and of the platform in use. */
  const cost = (f: Figures) => {
    const a = one(f);
    const b = two(f) ?? a;
    return {
      rssMB: Math.max(a.rssMB, b.rssMB, inUse(f).rssMB),
      heapMB: Math.max(a.heapMB, b.heapMB, inUse(f).heapMB),
      peakRssMB: Math.max(a.peakRssMB, b.peakRssMB),
      cpuShare: Math.max(a.cpuShare, b.cpuShare),
    };
  };
  const memoryMB = host.mb * host.memoryBudget;
  const cpuBudget = host.cores * host.cpuBudget;
  const bound = (budget: number, each: number) =>
    each > 0 && Number.isFinite(each) ? Math.max(0, Math.floor(budget / each)) : Number.POSITIVE_INFINITY;
  const bounds = (f: Figures) => {
    const c = cost(f);
    const steady = bound(memoryMB - empty.rssMB, c.rssMB);
    const peak = bound(memoryMB - empty.peakRssMB, c.peakRssMB);
    const cpu = bound(cpuBudget - empty.cpuShare, c.cpuShare);
    return { steady, peak, cpu, platforms: Math.min(steady, peak, cpu) };
  };
  const count = (n: number) => (Number.isFinite(n) ? String(n) : '∞');
  const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const standbyRows: [string, (f: Figures) => string][] = [
    ['the platform on its broker, no calls yet', () => ''],
    ['  broker rss / heap after GC, MB', (f) => `${f.standby.rssMB.toFixed(0)} / ${f.standby.heapMB.toFixed(0)}`],
    ['  the same of a broker with no platform', () => `${empty.rssMB.toFixed(0)} / ${empty.heapMB.toFixed(0)}`],
    ['  per platform: rss / heap, MB', (f) => `${one(f).rssMB.toFixed(1)} / ${one(f).heapMB.toFixed(1)}`],
    [
      '  per cached record: rss / heap, bytes',
      (f) => {
        // A small platform's rss is within the process's own variation: no figure when it came out at or below zero.
        const bytes = (mb: number) => (mb > 0 ? ((mb * 1048576) / f.standby.records).toFixed(0) : '-');
        return `${bytes(one(f).rssMB)} / ${bytes(one(f).heapMB)}`;
      },
    ],
    ['  peak rss during the resync, per platform, MB', (f) => one(f).peakRssMB.toFixed(0)],
    [
      '  broker CPU: µs per quote (quotes/s reached)',
      (f) => `${fixed(one(f).microsPerTick, 1)} (${f.standby.ticksPerSecond.toFixed(0)})`,
    ],
    ["  share of a core at the world's tick rate", (f) => `${fixed(one(f).cpuShare * 100, 2)} %`],
    ['  (a broker with no platform: share of a core)', () => `${(empty.cpuShare * 100).toFixed(2)} %`],
    ['two platforms on one broker, per platform', () => ''],
    [
      '  rss / heap, MB',
      (f) => {
        const p = two(f);
        return p ? `${p.rssMB.toFixed(1)} / ${p.heapMB.toFixed(1)}` : '-';
      },
    ],
    [
      '  peak rss during the resync, MB',
      (f) => {
        const p = two(f);
        return p ? p.peakRssMB.toFixed(0) : '-';
      },
    ],
    [
      "  share of a core at the world's tick rate",
      (f) => {
        const p = two(f);
        return p ? `${fixed(p.cpuShare * 100, 2)} %` : '-';
      },
    ],
    [
      '  second ÷ first: rss / heap / CPU per quote',
      (f) => `${second(f, 'rssMB')} / ${second(f, 'heapMB')} / ${second(f, 'microsPerTick')}`,
    ],
    [
      'in use (every record read once): rss / heap, MB',
      (f) => `${inUse(f).rssMB.toFixed(1)} / ${inUse(f).heapMB.toFixed(1)}`,
    ],
    ['cached reads: share of a core per 1,000/s', (f) => `${(f.cached.cpuMicros / 10).toFixed(2)} %`],
    [
      `broker host: ${(host.mb / 1024).toFixed(0)} GB × ${pct(host.memoryBudget)}, ${host.cores} core × ${pct(host.cpuBudget)}`,
      () => '',
    ],
    ['  platforms by memory: steady / all resyncing', (f) => `${count(bounds(f).steady)} / ${count(bounds(f).peak)}`],
    ['  platforms by CPU (no calls)', (f) => count(bounds(f).cpu)],
    [
      `  platforms V8's heap limit holds (here ${empty.heapLimitMB.toFixed(0)} MB)`,
      (f) => count(bound(empty.heapLimitMB - empty.heapMB, cost(f).heapMB)),
    ],
    ['  platforms = manager sessions per broker host', (f) => count(bounds(f).platforms)],
    [
      `  the same with ${hostReads} cached reads/s each`,
      (f) =>
        count(
          Math.min(
            bounds(f).steady,
            bounds(f).peak,
            bound(cpuBudget - empty.cpuShare, cost(f).cpuShare + (hostReads * f.cached.cpuMicros) / 1e6),
          ),
        ),
    ],
  ];
  const width = 52;
  console.log(
    `\nbroker figures, node ${process.version}, ${seconds} s per throughput run, ${idleSeconds} s idle per standby figure; worlds: ${results.map((r) => `${r.world} = ${worlds[r.world].accounts} accounts, ${worlds[r.world].trades} trades, ${worlds[r.world].symbols} symbols, ${worlds[r.world].ticksPerSecond} ticks/s`).join('; ')}`,
  );
  console.log(`${''.padEnd(width)}${results.map((r) => r.world.padStart(24)).join('')}`);
  for (const [label, value] of [...rows, ...standbyRows])
    console.log(`${label.padEnd(width)}${results.map((r) => value(r).padStart(24)).join('')}`);
  console.log(
    `(per platform: beside a broker with no platform; the host counts take the largest memory per platform measured, a platform in use or a standby, and assume the broker's V8 heap limit raised to the memory budget, --max-old-space-size=${Math.floor(memoryMB)})`,
  );
  for (const { label, file } of profiles) {
    const { lines, busyShare } = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, profileTop);
    console.log(`\nbroker CPU profile, ${label} (busy ${(busyShare * 100).toFixed(0)} % of the time; ${file}):`);
    for (const line of lines) console.log(`  ${(line.share * 100).toFixed(1).padStart(5)} %  ${line.name}`);
  }
  const failures = results.reduce((n, r) => n + r.echo.failures + r.cached.failures, 0);
  if (failures) {
    console.log(`${failures} answers were not the expected record`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
