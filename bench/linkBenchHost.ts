/**
 * The broker process of `npm run bench:broker`: the broker exactly as `broker/main.ts` starts it (platform file,
 * edge links on `/link`), plus, in the same process, a bare `ws` echo server and a status route, so that the bench
 * can compare a cached read over an edge link with a plain WebSocket round trip between the same two processes, and
 * read this process's memory and cache state.
 *
 * Environment: BROKER_SECRET, BROKER_PLATFORMS_FILE (both required), BENCH_PING_TIMEOUT_MS (optional). Prints one JSON ready line
 * `{"msg":"broker bench host listening","port":<broker>,"echoPort":<echo and status>}`.
 * `GET /status[?gc=1]` on the echo port answers `{ready, sizes, memory, cpuMicros}` (`memory.heapLimitMB`: V8's heap limit): `ready` once every platform's cache holds
 * a full snapshot; with `gc=1` a full garbage collection runs first, so `memory` is what the broker keeps; with
 * `loop=1` also `loopDelayMs: {p99, max}`, the event loop's delay since the previous such call (the first one starts
 * the monitor, whose 1 ms timer is CPU the broker itself does not spend, so none runs while the bench measures an idle
 * broker's CPU).
 * `loopDelayMs` and `startLoopDelayMs` also give the garbage collector's longest pause and the pauses' sum over the
 * same time (`gcMax`, `gcTotal`, ms), and a timer-drift probe's longest gap in wall and in this process's CPU time
 * (`turnWallMax`, `turnCpuMax`, ms; `DriftProbe`).
 * `startLoopDelayMs: {p99, max}` joins the answer once every platform's cache holds its first snapshot: the event loop's
 * delay from this process's start (the broker's start and first resync) until then, its monitor stopped at that point.
 * `resyncs` gives, per platform, the resyncs its cache completed.
 * `GET /kinds?kinds=users,trades,symbols` answers, per platform and kind, the heap bytes per cached record of a copy of
 * that table in three layouts, each built after a full garbage collection and measured after another: as the cache
 * keeps it (`kept`: packed or objects, `KINDS`), as shaped objects (`objects`) and as shaped objects with the JSON text
 * a read keeps beside them (`objectsWithJson`, `recordJson`); `{records, kept, objects, objectsWithJson}`.
 * `POST /profile/start` starts sampling this process's CPU; `POST /profile/stop?to=<file>` stops and writes the
 * `.cpuprofile` there (the bench's BENCH_PROFILE).
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer } from 'ws';
import { startBroker } from '../broker/broker.js';
import { KeyedTable } from '../broker/cache/keyedTable.js';
import { KINDS, type Row } from '../broker/cache/pumpCache.js';
import { recordJson } from '../broker/cache/recordJson.js';
import { shapeRecord } from '../shared/records/shape.js';
import { jsonLineLogger } from '../broker/observability/log.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The event loop's delay from this process's start until every cache holds its first snapshot (`startLoopDelayMs`). */
const startLoop = monitorEventLoopDelay({ resolution: 1 });
startLoop.enable();
let startLoopDelay:
  | { p99: number; max: number; gcMax: number; gcTotal: number; turnWallMax: number; turnCpuMax: number }
  | undefined;
/**
 * A timer-drift probe beside the monitors: a 1 ms timer chain, noting for each gap between two of its runs the wall
 * time and the CPU time this process spent in it (all its threads). A gap's CPU time is what the process did while the
 * timer waited, whatever else the machine ran: its largest (`cpuMax`) is the longest turn the broker itself made.
 */
class DriftProbe {
  wallMax = 0;
  cpuMax = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = { at: 0, cpu: 0 };

  start(): void {
    if (this.timer) return;
    this.last = { at: performance.now(), cpu: cpuNow() };
    const tick = () => {
      const now = { at: performance.now(), cpu: cpuNow() };
      this.wallMax = Math.max(this.wallMax, now.at - this.last.at);
      this.cpuMax = Math.max(this.cpuMax, (now.cpu - this.last.cpu) / 1000);
      this.last = now;
      this.timer = setTimeout(tick, 1);
    };
    this.timer = setTimeout(tick, 1);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The longest gap's wall and CPU time (ms) since the previous take, the sampling interval not subtracted. */
  take(): { turnWallMax: number; turnCpuMax: number } {
    const figures = { turnWallMax: this.wallMax, turnCpuMax: this.cpuMax };
    this.wallMax = 0;
    this.cpuMax = 0;
    return figures;
  }
}
const cpuNow = () => (({ user, system }) => user + system)(process.cpuUsage());
const startProbe = new DriftProbe();
startProbe.start();
const windowProbe = new DriftProbe();

/** Garbage-collection pauses (ms) since the start and since the previous `/status?loop=1`: the longest and their sum. */
const gcSince = { start: { max: 0, total: 0 }, window: { max: 0, total: 0 } };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    for (const into of [gcSince.start, gcSince.window]) {
      into.max = Math.max(into.max, entry.duration);
      into.total += entry.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });

const secret = process.env.BROKER_SECRET;
const platformsFile = process.env.BROKER_PLATFORMS_FILE;
if (!secret || !platformsFile) throw new Error('BROKER_SECRET and BROKER_PLATFORMS_FILE are required');

/** BENCH_PING_TIMEOUT_MS: the manager keep-alive's patience, when the bench needs more than the broker's default. */
const pingTimeoutMs = Number(process.env.BENCH_PING_TIMEOUT_MS) || undefined;
const broker = await startBroker({
  secret,
  port: 0,
  platformsFile,
  brokerId: 'bench',
  log: jsonLineLogger('warn'),
  ...(pingTimeoutMs ? { session: { pingTimeoutMs } } : {}),
});

/** What a monitor recorded, as the delay past its 1 ms sampling interval. */
const delayOf = (histogram: ReturnType<typeof monitorEventLoopDelay>) => ({
  p99: Math.max(0, histogram.percentile(99) / 1e6 - 1),
  max: Math.max(0, histogram.max / 1e6 - 1),
});

void Promise.all([...broker.platforms.all()].map((p) => p.cache.whenReady())).then(() => {
  // A stall is recorded when the monitor's timer next runs: let it run once more before reading.
  setTimeout(() => {
    startLoopDelay = {
      ...delayOf(startLoop),
      gcMax: gcSince.start.max,
      gcTotal: gcSince.start.total,
      ...startProbe.take(),
    };
    startLoop.disable();
    startProbe.stop();
  }, 10);
});

let profiler: Session | undefined;
async function profile(action: 'start' | 'stop', to: string | null): Promise<void> {
  if (action === 'start') {
    if (profiler) throw new Error('a profile is already being taken');
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 500 });
    await profiler.post('Profiler.start');
    return;
  }
  if (!profiler) throw new Error('no profile started');
  const { profile: taken } = await profiler.post('Profiler.stop');
  profiler.disconnect();
  profiler = undefined;
  if (to) writeFileSync(to, JSON.stringify(taken));
}

/** Heap bytes (after a full GC) that `build`'s result holds, per record of `records`. */
function heapPerRecord(records: number, build: () => unknown): number {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const held = build();
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  if (held === undefined) throw new Error('nothing built');
  return records > 0 ? (after - before) / records : Number.NaN;
}

/** Per platform and kind: heap bytes per cached record of a copy of the table as kept, as objects, as objects and JSON. */
function kindFigures(kinds: string[]) {
  const out: Record<
    string,
    Record<string, { records: number; kept: number; objects: number; objectsWithJson: number }>
  > = {};
  for (const platform of broker.platforms.all()) {
    const figures: (typeof out)[string] = (out[platform.id] = {});
    for (const kind of kinds) {
      const table = platform.cache.table(kind);
      const spec = KINDS[platform.family][kind];
      if (!table || !spec) continue;
      const shape = spec.schema ? shapeRecord(spec.schema) : (row: Row) => ({ ...row });
      const copy = (packed: readonly string[] | undefined, json: boolean) => () => {
        const t = new KeyedTable<Row>(table.keyOf, table.capacity, packed);
        for (const [name, field] of Object.entries(spec.indexes ?? {})) t.addIndex(name, (r) => r[field] as never);
        // Each row as it arrives: shaped from a parsed record, as `PumpCache` shapes it.
        for (const row of table.values()) {
          const shaped = shape(row) as Row;
          if (json) recordJson(shaped);
          t.put(shaped);
        }
        return t;
      };
      figures[kind] = {
        records: table.size,
        kept: heapPerRecord(table.size, copy(table.packed, false)),
        objects: heapPerRecord(table.size, copy(undefined, false)),
        objectsWithJson: heapPerRecord(table.size, copy(undefined, true)),
      };
    }
  }
  return out;
}

/** This process's event-loop delay since the previous `/status?loop=1`, from the first one on. */
const loop = monitorEventLoopDelay({ resolution: 1 });

const status = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const action = /^\/profile\/(start|stop)$/.exec(url.pathname)?.[1] as 'start' | 'stop' | undefined;
  if (action && req.method === 'POST') {
    profile(action, url.searchParams.get('to')).then(
      () => res.writeHead(204).end(),
      (error: Error) => res.writeHead(409, { 'content-type': 'text/plain' }).end(error.message),
    );
    return;
  }
  if (url.pathname === '/kinds') {
    const kinds = (url.searchParams.get('kinds') ?? 'users,trades,symbols').split(',').filter(Boolean);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kindFigures(kinds)));
    return;
  }
  if (url.pathname !== '/status') {
    res.writeHead(404).end();
    return;
  }
  const loopDelay = () => {
    // Nothing measured yet: `enable` reports whether the monitor was off.
    const gc = { gcMax: gcSince.window.max, gcTotal: gcSince.window.total };
    gcSince.window = { max: 0, total: 0 };
    const turns = windowProbe.take();
    windowProbe.start();
    if (loop.enable()) return { p99: 0, max: 0, ...gc, ...turns };
    // The histogram records whole sampling intervals (1 ms): the delay is what exceeds it.
    const figures = { ...delayOf(loop), ...gc, ...turns };
    loop.reset();
    return figures;
  };
  if (url.searchParams.get('gc') === '1') collectGarbage();
  const platforms = [...broker.platforms.all()];
  const memory = process.memoryUsage();
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      ready: platforms.length > 0 && platforms.every((p) => p.cache.ready),
      sizes: Object.fromEntries(platforms.map((p) => [p.id, p.cache.sizes()])),
      resyncs: Object.fromEntries(platforms.map((p) => [p.id, p.cache.resyncs])),
      ...(startLoopDelay ? { startLoopDelayMs: startLoopDelay } : {}),
      memory: {
        rssMB: memory.rss / 1048576,
        heapUsedMB: memory.heapUsed / 1048576,
        externalMB: memory.external / 1048576,
        heapLimitMB: getHeapStatistics().heap_size_limit / 1048576,
      },
      cpuMicros: (({ user, system }) => user + system)(process.cpuUsage()),
      ...(url.searchParams.get('loop') === '1' ? { loopDelayMs: loopDelay() } : {}),
    }),
  );
});
// The same library and settings as the edge link server (no compression), answering each frame with itself.
const echo = new WebSocketServer({ server: status, perMessageDeflate: false });
echo.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
await new Promise<void>((resolve) => status.listen(0, '127.0.0.1', resolve));

process.stdout.write(
  `${JSON.stringify({ msg: 'broker bench host listening', port: broker.port, echoPort: (status.address() as AddressInfo).port })}\n`,
);

const stop = () => {
  echo.close();
  status.close();
  broker.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
  setTimeout(() => process.exit(1), 5000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
