/**
 * `npm run bench:sim`: the simulator at the scale the service must rehearse against, beside a small world measured in
 * the same run so the figures can be read as ratios on a shared, noisy machine.
 *
 * For each family it starts a real simulator process twice (the small default world, then the scale world), and
 * measures: start-up (spawn to the ready line, world generation included); a pumping manager's full resync (time,
 * records, bytes); then, for a steady window, the quote feed's achieved rate against its configured one, the change
 * events the pumping manager receives and how far behind the server clock each tick arrives, live command round
 * trips from a second manager session, the event-loop delay inside the simulator, and its resident memory (now and
 * peak).
 *
 * Environment: SCALE_ACCOUNTS (100000), SCALE_TRADES (200000), SCALE_SYMBOLS (1000), SCALE_TICKS (1000 per second),
 * SCALE_SECONDS (15, the steady window), SCALE_FAMILIES (PF4,PF5), SCALE_IN_FLIGHT (8 live commands in flight).
 * Progress (which run and phase, time spent, time left) goes to standard error; the report to standard output.
 */
import '../shared/requireNode.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startService, type Service } from '../launcher/stack.js';
import type { Family } from '../shared/protocol.js';
import { Progress } from './progress.js';
import { percentile } from './measure.js';

const num = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
};
const scale = {
  accounts: num('SCALE_ACCOUNTS', 100_000),
  trades: num('SCALE_TRADES', 200_000),
  symbols: num('SCALE_SYMBOLS', 1000),
  ticksPerSecond: num('SCALE_TICKS', 1000),
};
const small = { accounts: 200, trades: 300, symbols: 12, ticksPerSecond: 10 };
const windowSeconds = num('SCALE_SECONDS', 15);
const inFlight = Math.max(1, num('SCALE_IN_FLIGHT', 8));
const families = (process.env.SCALE_FAMILIES ?? 'PF4,PF5').split(',').map((f) => f.trim()) as Family[];
const PASSWORD = 'bench-manager';

type World = typeof scale;

interface Figures {
  family: string;
  world: World;
  startupMs: number;
  resyncMs: number;
  resyncRecords: number;
  resyncMB: number;
  feedAchieved: number;
  ticksDropped: number;
  eventsPerSecond: number;
  ticksPerSecondReceived: number;
  tickLagP50: number;
  tickLagP99: number;
  commandsPerSecond: number;
  commandP50: number;
  commandP99: number;
  commandErrors: number;
  loopDelayP99: number;
  loopDelayMax: number;
  rssMB: number;
  peakRssMB: number;
}

/** A lean manager connection: counts events instead of keeping them, answers requests by id. */
class Session {
  private nextId = 1;
  private readonly pending = new Map<number, (frame: any) => void>();
  onEvent: (frame: any, bytes: number) => void = () => {};

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString());
      if ('event' in frame) this.onEvent(frame, data.length);
      else {
        const done = this.pending.get(frame.id);
        this.pending.delete(frame.id);
        done?.(frame);
      }
    });
  }

  static open(port: number, server: string): Promise<Session> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/${server}`, { maxPayload: 256 * 1024 * 1024 });
      ws.once('open', () => resolve(new Session(ws)));
      ws.once('error', reject);
    });
  }

  call(cmd: string, args: Record<string, unknown> = {}): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ id, cmd, args }));
    });
  }

  close(): void {
    this.ws.terminate();
  }
}

async function state(port: number, server: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/control/${server}/state`);
  return res.json();
}

function peakRssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

async function measure(family: Family, world: World, dir: string, progress: Progress): Promise<Figures> {
  progress.nextRun();
  const server = `bench-${family.toLowerCase()}`;
  const configPath = join(dir, `${server}-${world.accounts}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      seed: 7,
      servers: [{ name: server, family, ...world, managers: [{ login: 1000, password: PASSWORD }] }],
    }),
  );
  progress.phase(`starting the simulator (generating ${world.accounts} accounts, ${world.trades} trades)`);
  const started = performance.now();
  const sim: Service = await startService(
    'sim',
    'sim/main.ts',
    { SIM_PORT: '0', SIM_CONFIG: configPath },
    () => {},
    600_000,
  );
  const startupMs = performance.now() - started;
  try {
    // Full resync on a pumping session.
    const pump = await Session.open(sim.port, server);
    let resyncRecords = 0;
    let resyncBytes = 0;
    let resyncDone!: () => void;
    const resynced = new Promise<void>((resolve) => {
      resyncDone = resolve;
    });
    let events = 0;
    let ticks = 0;
    const lags: number[] = [];
    let counting = false;
    pump.onEvent = (frame, bytes) => {
      if (frame.event === 'resync') {
        resyncBytes += bytes;
        if (frame.op === 'chunk') resyncRecords += frame.record.items.length;
        if (frame.op === 'end') resyncDone();
        return;
      }
      if (!counting) return;
      events++;
      if (frame.event === 'ticks') {
        ticks++;
        const at = Date.parse(frame.record.time);
        if (Number.isFinite(at)) lags.push(Date.now() - at);
      }
    };
    progress.phase('full resync of a pumping manager');
    const resyncStart = performance.now();
    const login = await pump.call('login', { login: 1000, password: PASSWORD, pump: true });
    if (login.error) throw new Error(`login failed: ${JSON.stringify(login.error)}`);
    await resynced;
    const resyncMs = performance.now() - resyncStart;

    // Steady window: the feed runs, the pump counts, a second session sends live reads.
    const live = await Session.open(sim.port, server);
    const liveLogin = await live.call('login', { login: 1000, password: PASSWORD, pump: false });
    if (liveLogin.error) throw new Error(`login failed: ${JSON.stringify(liveLogin.error)}`);
    const users = await live.call('UsersRequest', { limit: 1000 });
    const logins: number[] = (users.result?.items ?? users.result ?? []).map((u: { login: number }) => u.login);
    if (logins.length === 0) throw new Error(`no accounts to read: ${JSON.stringify(users).slice(0, 200)}`);
    const readCmd = family === 'PF4' ? 'UserRecordRequest' : 'UserRequest';

    const before = await state(sim.port, server); // also resets the event-loop delay histogram
    progress.window();
    counting = true;
    const windowStart = performance.now();
    const end = windowStart + windowSeconds * 1000;
    const latencies: number[] = [];
    let commandErrors = 0;
    let pick = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          const answer = await live.call(readCmd, { login: logins[pick++ % logins.length] });
          latencies.push(performance.now() - t0);
          if (answer.error || answer.result?.login === undefined) commandErrors++;
        }
      }),
    );
    const elapsed = (performance.now() - windowStart) / 1000;
    counting = false;
    const after = await state(sim.port, server);
    pump.close();
    live.close();
    progress.endRun();

    latencies.sort((a, b) => a - b);
    lags.sort((a, b) => a - b);
    const emitted = after.ticksEmitted - before.ticksEmitted;
    return {
      family,
      world,
      startupMs,
      resyncMs,
      resyncRecords,
      resyncMB: resyncBytes / 1048576,
      feedAchieved: world.ticksPerSecond > 0 ? emitted / elapsed / world.ticksPerSecond : Number.NaN,
      ticksDropped: after.ticksDropped - before.ticksDropped,
      eventsPerSecond: events / elapsed,
      ticksPerSecondReceived: ticks / elapsed,
      tickLagP50: percentile(lags, 0.5),
      tickLagP99: percentile(lags, 0.99),
      commandsPerSecond: latencies.length / elapsed,
      commandP50: percentile(latencies, 0.5),
      commandP99: percentile(latencies, 0.99),
      commandErrors,
      loopDelayP99: after.process.eventLoopDelayP99Ms,
      loopDelayMax: after.process.eventLoopDelayMaxMs,
      rssMB: after.process.rssMB,
      peakRssMB: peakRssMB(sim.child.pid!),
    };
  } finally {
    await sim.stop();
  }
}

const rows: [string, (f: Figures) => number, number][] = [
  ['start-up (spawn to ready), ms', (f) => f.startupMs, 0],
  ['full resync, ms', (f) => f.resyncMs, 0],
  ['resync records', (f) => f.resyncRecords, 0],
  ['resync payload, MB', (f) => f.resyncMB, 1],
  ['feed: achieved / configured rate', (f) => f.feedAchieved, 3],
  ['ticks the busy feed dropped', (f) => f.ticksDropped, 0],
  ['ticks received per second', (f) => f.ticksPerSecondReceived, 0],
  ['change events received per second', (f) => f.eventsPerSecond, 0],
  ['tick lag p50 (server stamp to receipt), ms', (f) => f.tickLagP50, 0],
  ['tick lag p99, ms', (f) => f.tickLagP99, 0],
  [`live reads per second (${inFlight} in flight)`, (f) => f.commandsPerSecond, 0],
  ['live read p50, ms', (f) => f.commandP50, 2],
  ['live read p99, ms', (f) => f.commandP99, 2],
  ['live read errors', (f) => f.commandErrors, 0],
  ['event-loop delay p99, ms', (f) => f.loopDelayP99, 1],
  ['event-loop delay max, ms', (f) => f.loopDelayMax, 1],
  ['resident memory at the end, MB', (f) => f.rssMB, 0],
  ['peak resident memory, MB', (f) => f.peakRssMB, 0],
];

function report(base: Figures, big: Figures): void {
  const describe = (w: World) =>
    `${w.accounts} accounts, ${w.trades} trades, ${w.symbols} symbols, ${w.ticksPerSecond} ticks/s`;
  console.log(
    `\n${base.family}: small = ${describe(base.world)}; scale = ${describe(big.world)}; window ${windowSeconds} s`,
  );
  console.log(`${''.padEnd(46)} ${'small'.padStart(10)} ${'scale'.padStart(10)} ${'scale/small'.padStart(12)}`);
  for (const [label, value, digits] of rows) {
    const a = value(base);
    const b = value(big);
    const ratio = a > 0 && Number.isFinite(a) && Number.isFinite(b) ? `${(b / a).toFixed(2)}×` : '-';
    console.log(
      `${label.padEnd(46)} ${a.toFixed(digits).padStart(10)} ${b.toFixed(digits).padStart(10)} ${ratio.padStart(12)}`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sim-scale-'));
try {
  console.log(`node ${process.version}; simulator scale run`);
  for (const family of families) {
    if (family !== 'PF4' && family !== 'PF5') throw new Error(`SCALE_FAMILIES: unknown family ${family as string}`);
  }
  const progress = new Progress(
    families.flatMap((family) => [
      { label: `${family} small world`, world: 'small', windowSeconds },
      { label: `${family} scale world`, world: 'scale', windowSeconds },
    ]),
  );
  for (const family of families) {
    const base = await measure(family, small, dir, progress);
    const big = await measure(family, scale, dir, progress);
    report(base, big);
  }
  progress.finish();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
