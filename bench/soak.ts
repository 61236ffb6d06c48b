/**
 * `npm run soak`: a steady mixed load on the whole stack for 10 minutes, printing the memory of the edge (the workerd
 * process's RSS, and the V8 heap its two isolates hold and have reserved, read through workerd's inspector), the
 * broker and the simulator (RSS, and the broker's V8 heap from its /metrics) at the start, every minute and at the
 * end, beside what the edge's objects hold then: the idempotency records of the soak's client (all its ledgers), the
 * link objects' late-outcome routes and edge replica rows (all of both demo platforms'), and the ledgers' SQLite files
 * on disk. The goal is flat memory, judged over the last half of the run on the heap the edge's isolates hold and on
 * the process's RSS: a line fitted through the samples (least squares: garbage collection makes the figures swing
 * tens of MB from one sample to the next, so no two samples are compared) may rise at most SOAK_FLAT_MB over that
 * half. The default is about twice the fitted rise's standard error at the swing measured in 25-minute runs on the
 * development machine (docs/perf/2026-11-28-soak.md): a smaller bound would call that noise growth, a larger one
 * would let a steady leak of a few MB a minute pass.
 *
 * The load, paced at SOAK_RATE requests per second over at most SOAK_IN_FLIGHT at once, cycles through a fixed mix
 * on the demo platforms:
 *   cached   35%  PF4 UserRecordGet/{login}: an account from the broker's pumping cache
 *   page     15%  PF4 TradesGet?limit=100, following the cursor page by page: a cached page
 *   live     25%  PF4 UserRecordRequest/{login}, PF4 ServerTime, PF5 TimeGet: round trips to the trading server
 *   write    25%  writes under an Idempotency-Key: SOAK_WRITERS accounts of its own, each renamed in turn by
 *                 UserRecordUpdate (one write in flight per account), one in 5 sent again with its key (it must
 *                 replay the same answer), and one in 40 an account created by UserRecordNew
 * Every answer is checked. At the end each own account is read live from the trading server and must carry the last
 * name a write was answered with, and every created account must exist exactly once: "lost" and "duplicated" count
 * the exceptions. The trading server's state hardly grows (renames overwrite), so memory growth is the stack's own.
 * The broker remembers each keyed outcome for 10 minutes (at most 20,000, see broker/link/callOutcomes.ts), so its
 * memory rises through the first 10 minutes of keyed writes by design and levels off after.
 *
 * Environment: SOAK_SECONDS (600), SOAK_RATE (200), SOAK_IN_FLIGHT (32), SOAK_WRITERS (8), SOAK_INTERVAL_SECONDS
 * (60: how often memory is printed), SOAK_FLAT_MB (50). The edge's API rate limit is kept out of reach (API_RATE_LIMIT
 * wins if set). Exits 1 when a write was lost or duplicated, a request got no HTTP answer, or an answer was wrong;
 * the memory verdict is printed, not part of the exit code (a shared machine's load moves it).
 */
import '../shared/requireNode.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDGE_WORKER, OBJECTS_WORKER, objectCall } from '../launcher/edge.js';
import { inspectWorkers, type Inspector } from './inspector.js';
import { startStack, type Stack } from '../launcher/stack.js';
import { DEFAULT_IDEMPOTENCY_SHARDS, DEFAULT_LINKS_PER_PLATFORM, linkName } from '../workers/gateway/names.js';
import type { LedgerStats, LinkStats } from '../workers/gateway/messages.js';
import { LOCAL_HOME } from '../test/support/edge.js';
import { percentile } from './measure.js';
import { descendantProcessesNamed } from './processes.js';
import { isEntryModule } from '../shared/entryModule.js';

export interface SoakOptions {
  seconds?: number;
  /** Requests per second. */
  rate?: number;
  /** Most requests in flight at once; a request due while that many are out is shed (counted). */
  inFlight?: number;
  writers?: number;
  /** How often memory is sampled and printed (seconds). */
  intervalSeconds?: number;
  /** Lines as they come (default: none). */
  log?: (line: string) => void;
  /** Most the edge's fitted RSS may rise over the run's last half for the verdict "flat" (MB; default 50). */
  flatMb?: number;
  /** A running stack; default: a fresh one on a data folder of its own (persistent storage, as `npm start`). */
  stack?: Stack;
}

export interface MemorySample {
  /** Seconds since the load started. */
  at: number;
  /** RSS in bytes; null when it cannot be read (no /proc). */
  edge: number | null;
  broker: number | null;
  sim: number | null;
  /** The broker's V8 heap in use (bytes), from its /metrics. */
  brokerHeap: number | null;
  /**
   * What the edge's two isolates (the worker's and the objects') hold alive: the least V8 heap each had in use over the
   * interval, asked through workerd's inspector every HEAP_POLL_MS (bytes; null when it could not be asked). Under
   * load V8 collects many times a minute, so the least is what survived a collection; workerd's inspector does not
   * take a request to collect. `committed`: the heap V8 has reserved for both at the sample (its size, not its use).
   */
  heap?: { edge: number; objects: number; committed?: number } | null;
  /** What the edge's objects hold (null when they could not be asked). */
  held: Held | null;
}

/** What the edge's objects hold at a sample. */
export interface Held {
  /** Idempotency records in the soak client's ledgers (all IDEMPOTENCY_SHARDS of them). */
  keys: number;
  /** Late-outcome routes in the demo platforms' link objects. */
  routes: number;
  /** Edge replica rows in the demo platforms' link objects. */
  replicaRows: number;
  /** Bytes of the ledgers' SQLite files (with their write-ahead logs) on disk; null without a data folder. */
  ledgerDiskBytes: number | null;
}

/** The edge's RSS over the last half of the run: a least-squares line through its samples. */
export interface MemoryVerdict {
  /** The fitted line's rise over the half (MB), and its standard error. */
  riseMb: number;
  errorMb: number;
  flatMb: number;
  flat: boolean;
  samples: number;
}

export interface SoakReport {
  seconds: number;
  requests: number;
  byKind: Record<Kind, number>;
  /** Answers that were not the expected success (samples in `errorSamples`). */
  errors: number;
  errorSamples: string[];
  /** Requests that got no HTTP answer. */
  resets: number;
  /** Requests due while SOAK_IN_FLIGHT were out, not sent. */
  shed: number;
  /** `deferred`: write turns taken by a cached read because every own account had a write in flight. */
  writes: {
    updates: number;
    replays: number;
    replayMismatches: number;
    creates: number;
    retries: number;
    deferred: number;
  };
  lost: number;
  duplicated: number;
  unresolved: number;
  latencyMs: { p50: number; p99: number };
  memory: MemorySample[];
  /** The edge's RSS over the last half; null with fewer than 3 samples in it. */
  verdict: MemoryVerdict | null;
  /** The heap the edge's isolates hold alive over the last half; null without heap figures. */
  heapVerdict: MemoryVerdict | null;
}

type Kind = 'cached' | 'page' | 'live' | 'write';
/** The mix in 20 slots: 7 cached, 3 page, 5 live, 5 write, interleaved. */
const CYCLE: Kind[] = [
  'cached',
  'live',
  'write',
  'cached',
  'page',
  'cached',
  'live',
  'write',
  'cached',
  'live',
  'cached',
  'write',
  'page',
  'cached',
  'live',
  'write',
  'cached',
  'page',
  'live',
  'write',
];
const REPLAY_EVERY = 5;
const CREATE_EVERY = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / 1048576).toFixed(1)} MB`);
const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/** Resident set size of a process (Linux /proc), in bytes. */
function rss(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Bytes of the files in `dir` (0 when it does not exist). */
function folderBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

/** Asks the soak client's ledgers and the demo platforms' link objects what they hold. */
async function heldByEdge(stack: Stack, dataDir: string | undefined): Promise<Held | null> {
  try {
    const mf = stack.edge.miniflare;
    const ledgers = await Promise.all(
      Array.from({ length: DEFAULT_IDEMPOTENCY_SHARDS }, (_, n) =>
        objectCall<LedgerStats>(mf, 'IDEMPOTENCY', `${stack.clientId}#${n}`, 'stats'),
      ),
    );
    const links = await Promise.all(
      [stack.platforms.pf4, stack.platforms.pf5].flatMap((p) =>
        Array.from({ length: DEFAULT_LINKS_PER_PLATFORM }, (_, n) =>
          objectCall<LinkStats>(mf, 'LINKS', linkName(p, LOCAL_HOME.region, n), 'stats'),
        ),
      ),
    );
    return {
      keys: ledgers.reduce((k, l) => k + l.records, 0),
      routes: links.reduce((k, l) => k + l.lateRoutes, 0),
      replicaRows: links.reduce((k, l) => k + Object.values(l.replica?.tables ?? {}).reduce((a, b) => a + b, 0), 0),
      ledgerDiskBytes: dataDir ? folderBytes(join(dataDir, 'edge', 'do', '-IdempotencyLedger')) : null,
    };
  } catch {
    return null;
  }
}

/**
 * The verdict on one memory figure over the last half of the run (samples at or after half the run's time): by
 * default the edge's RSS; `liveHeap` gives the heap its isolates hold.
 */
export function memoryVerdict(
  memory: MemorySample[],
  seconds: number,
  flatMb: number,
  figure: (m: MemorySample) => number | null = (m) => m.edge,
): MemoryVerdict | null {
  const points = memory
    .filter((m) => m.at >= seconds / 2 && figure(m) !== null)
    .map((m) => ({ x: m.at, y: figure(m)! / 1048576 }));
  const n = points.length;
  if (n < 3) return null;
  const xMean = points.reduce((a, p) => a + p.x, 0) / n;
  const yMean = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - xMean) ** 2, 0);
  if (sxx === 0) return null;
  const slope = points.reduce((a, p) => a + (p.x - xMean) * (p.y - yMean), 0) / sxx;
  const residual = points.reduce((a, p) => a + (p.y - (yMean + slope * (p.x - xMean))) ** 2, 0);
  const span = points[n - 1].x - points[0].x;
  const riseMb = slope * span;
  const errorMb = Math.sqrt(residual / (n - 2) / sxx) * span;
  return { riseMb, errorMb, flatMb, flat: riseMb <= flatMb, samples: n };
}

/** The V8 heap the edge's isolates hold alive at a sample, both together (null without it). */
export const liveHeap = (m: MemorySample): number | null => (m.heap ? m.heap.edge + m.heap.objects : null);

const HEAP_POLL_MS = 2000;

/** The least heap each isolate had in use since the last `take()`, polled through the inspector. */
function heapFloor(inspectors: Inspector[] | null) {
  let least: number[] | null = null;
  let committed = 0;
  const poll = async () => {
    try {
      const usage = await Promise.all(
        inspectors!.map((i) => i.send<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage')),
      );
      const used = usage.map((u) => u.usedSize);
      least = least ? least.map((v, n) => Math.min(v, used[n])) : used;
      committed = usage.reduce((a, u) => a + u.totalSize, 0);
    } catch {
      /* the sample shows n/a for an interval without any reading */
    }
  };
  const timer = inspectors
    ? setInterval(() => {
        void poll();
      }, HEAP_POLL_MS)
    : undefined;
  return {
    async take(): Promise<{ edge: number; objects: number; committed: number } | null> {
      if (!inspectors) return null;
      await poll();
      const found: number[] | null = least;
      least = null;
      return found ? { edge: found[0], objects: found[1], committed } : null;
    },
    stop: () => clearInterval(timer),
  };
}

async function brokerHeap(brokerUrl: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${brokerUrl}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const seconds = options.seconds ?? 600;
  const flatMb = options.flatMb ?? 50;
  const rate = options.rate ?? 200;
  const maxInFlight = options.inFlight ?? 32;
  const writerCount = options.writers ?? 8;
  const intervalMs = (options.intervalSeconds ?? 60) * 1000;
  const log = options.log ?? (() => {});
  const own = !options.stack;
  const dataDir = own ? mkdtempSync(join(tmpdir(), 'gateway-soak-')) : undefined;
  const stack =
    options.stack ??
    (await startStack({
      seed: 7,
      dataDir,
      edgeVars: { API_RATE_LIMIT: process.env.API_RATE_LIMIT ?? '1000000000' },
      edgeInspector: true,
    }));
  // A stack of the caller's may have no inspector: then no heap figures.
  const inspectors = await stack.edge.miniflare
    .getInspectorURL()
    .then((url) => inspectWorkers(url, [EDGE_WORKER, OBJECTS_WORKER]))
    .catch(() => null);
  try {
    const token = await stack.token();
    const auth = { authorization: `Bearer ${token}` };
    const pf4 = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
    const pf5 = `${stack.edgeUrl}/api/v2/PF5/${stack.platforms.pf5}`;
    const run = Date.now().toString(36);

    let errors = 0;
    let resets = 0;
    const errorSamples: string[] = [];
    const latencies: number[] = [];
    type Answer = {
      status: number;
      body: { data?: any; error?: { code: string; message: string | null } | null; meta?: any };
    };
    /** One request; null when no HTTP answer came. */
    const send = async (
      method: string,
      url: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ): Promise<Answer | null> => {
      const started = performance.now();
      try {
        const res = await fetch(url, {
          method,
          headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const answer = { status: res.status, body: (await res.json()) as Answer['body'] };
        latencies.push(performance.now() - started);
        return answer;
      } catch {
        resets++;
        return null;
      }
    };
    const wrong = (what: string, answer: Answer | null) => {
      if (!answer) return; // counted as a reset
      errors++;
      if (errorSamples.length < 10)
        errorSamples.push(`${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    };

    // Accounts to read, and a group to create in.
    const listed = await send('GET', `${pf4}/UsersRequest?limit=200&requestTimeout=30`);
    const accounts = (listed?.body.data ?? []) as Array<{ login: number; group: string }>;
    if (!accounts.length) throw new Error(`soak: no account to read (${JSON.stringify(listed?.body)})`);
    const logins = accounts.map((a) => a.login);
    const group = accounts[0].group;

    // Keyed writes: each repeated under its key until the answer is final (a careful client's way).
    const writes = { updates: 0, replays: 0, replayMismatches: 0, creates: 0, retries: 0, deferred: 0 };
    let unresolved = 0;
    const keyed = async (path: string, body: unknown, key: string): Promise<Answer['body'] | null> => {
      for (let attempt = 0; attempt < 50; attempt++) {
        if (attempt > 0) {
          writes.retries++;
          await sleep(200);
        }
        const answer = await send('POST', `${pf4}/${path}`, body, { 'idempotency-key': key });
        if (!answer) continue;
        if (answer.body.error === null) return answer.body;
        if (answer.status === 429 || answer.body.error?.code === 'NoConnect') continue; // not final: repeat
        wrong(path, answer);
        return null;
      }
      unresolved++;
      return null;
    };

    const created: Array<{ name: string; login: number }> = [];
    let createSerial = 0;
    const create = async (name: string) => {
      const body = await keyed('UserRecordNew', { group, name }, `soak-${run}-new-${createSerial++}`);
      if (body?.data?.name !== name) return null;
      writes.creates++;
      created.push({ name, login: body.data.login });
      return body.data.login as number;
    };
    /** `lastName`: the name of the last answered rename; null after a write that got no final success. */
    interface Writer {
      login: number;
      seq: number;
      busy: boolean;
      lastName: string | null;
      firstName: string;
    }
    const writers: Writer[] = [];
    for (let i = 0; i < writerCount; i++) {
      const name = `Soak ${run} w${i} 0`;
      const login = await create(name);
      if (login === null) throw new Error(`soak: could not create writer account ${i} (${errorSamples.at(-1)})`);
      writers.push({ login, seq: 0, busy: false, lastName: name, firstName: name });
    }

    let writeSerial = 0;
    const createDue = () => writeSerial % CREATE_EVERY === CREATE_EVERY - 1;
    const write = async (): Promise<void> => {
      if (createDue()) {
        await create(`Soak ${run} c${writeSerial++}`);
        return;
      }
      const serial = writeSerial++;
      const w = writers.find((x) => !x.busy)!;
      w.busy = true;
      try {
        const name = `Soak ${run} w${writers.indexOf(w)} ${++w.seq}`;
        const key = `soak-${run}-w${writers.indexOf(w)}-${w.seq}`;
        const body = await keyed(`UserRecordUpdate/${w.login}`, { name }, key);
        if (!body || body.data?.name !== name) {
          w.lastName = null;
          if (body) wrong('UserRecordUpdate answer', { status: 200, body });
          return;
        }
        writes.updates++;
        w.lastName = name;
        if (serial % REPLAY_EVERY === 0) {
          const again = await keyed(`UserRecordUpdate/${w.login}`, { name }, key);
          writes.replays++;
          if (again?.data?.name !== name) writes.replayMismatches++;
        }
      } finally {
        w.busy = false;
      }
    };

    let cursor: string | null = null;
    let liveTurn = 0;
    const read = async (kind: Exclude<Kind, 'write'>): Promise<void> => {
      const login = logins[Math.floor(Math.random() * logins.length)];
      if (kind === 'cached') {
        const a = await send('GET', `${pf4}/UserRecordGet/${login}`);
        if (a && (a.body.error !== null || a.body.data?.login !== login)) wrong('UserRecordGet', a);
      } else if (kind === 'page') {
        const a = await send(
          'GET',
          `${pf4}/TradesGet?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        if (a && (a.body.error !== null || !Array.isArray(a.body.data))) {
          wrong('TradesGet', a);
          cursor = null;
          return;
        }
        if (a) cursor = a.body.meta?.paging?.nextCursor ?? null;
      } else {
        const turn = liveTurn++ % 3;
        const url =
          turn === 0 ? `${pf4}/UserRecordRequest/${login}` : turn === 1 ? `${pf4}/ServerTime` : `${pf5}/TimeGet`;
        const a = await send('GET', url);
        if (a && (a.body.error !== null || a.body.data === null || a.body.data === undefined))
          wrong(url.slice(url.lastIndexOf('/v2/')), a);
      }
    };

    // Memory: at the start, every interval, at the end.
    const memory: MemorySample[] = [];
    const loadStart = Date.now();
    const heaps = heapFloor(inspectors);
    const sample = async (): Promise<MemorySample> => {
      const heap = await heaps.take();
      const edgePids = descendantProcessesNamed('workerd');
      const edge = edgePids.length ? edgePids.reduce((n, pid) => n + (rss(pid) ?? 0), 0) : null;
      const s = {
        at: Math.round((Date.now() - loadStart) / 1000),
        edge,
        broker: rss(stack.broker.child.pid),
        sim: rss(stack.sim.child.pid),
        brokerHeap: await brokerHeap(stack.brokerUrl),
        held: await heldByEdge(stack, dataDir),
        heap,
      };
      memory.push(s);
      return s;
    };
    let requests = 0;
    let intervalRequests = 0;
    let intervalFailuresFrom = 0;
    let shed = 0;
    const byKind: Record<Kind, number> = { cached: 0, page: 0, live: 0, write: 0 };
    const held = (h: Held | null) =>
      h === null
        ? '   (objects not asked)'
        : `   ${String(h.keys).padStart(7)} ${String(h.routes).padStart(6)} ${String(h.replicaRows).padStart(7)} ${(h.ledgerDiskBytes === null ? 'n/a' : MB(h.ledgerDiskBytes)).padStart(9)}`;
    const show = (label: string, s: MemorySample, extra = ' '.repeat(42)) =>
      log(
        `  ${label.padEnd(6)} ${MB(s.edge).padStart(10)} ${(s.heap ? `${MB(s.heap.edge)} + ${MB(s.heap.objects)}` : 'n/a').padStart(19)} ${(s.heap?.committed ? MB(s.heap.committed) : 'n/a').padStart(9)} ${MB(s.broker).padStart(11)} ${`(${MB(s.brokerHeap)})`.padStart(11)} ${MB(s.sim).padStart(10)}${extra}${held(s.held)}`,
      );
    log(
      `soak: ${seconds} s at ${rate} requests/s (at most ${maxInFlight} in flight): 35% cached reads, 15% cached pages, ` +
        `25% live reads, 25% writes under Idempotency-Keys (${writerCount} accounts renamed in turn, 1 in ${REPLAY_EVERY} ` +
        `replayed, 1 in ${CREATE_EVERY} a new account)`,
    );
    log(
      '  time    edge RSS  edge heap + objects  committed   broker RSS (its heap)    sim RSS   requests/s  errors  p50 ms  p99 ms      keys routes replica ledger disk',
    );
    show('start', await sample());

    // The load: due requests launched every 10 ms, paced to the rate.
    let inFlight = 0;
    let slot = 0;
    let due = 0;
    let last = performance.now();
    const pending = new Set<Promise<void>>();
    const end = loadStart + seconds * 1000;
    let nextSample = loadStart + intervalMs;
    let intervalLatencyFrom = 0;
    while (Date.now() < end) {
      const now = performance.now();
      due += ((now - last) / 1000) * rate;
      last = now;
      while (due >= 1) {
        due--;
        if (inFlight >= maxInFlight) {
          shed++;
          continue;
        }
        let kind = CYCLE[slot++ % CYCLE.length];
        // Each own account takes one write at a time: with all of them busy, a cached read goes instead.
        if (kind === 'write' && !createDue() && writers.every((w) => w.busy)) {
          writes.deferred++;
          kind = 'cached';
        }
        byKind[kind]++;
        requests++;
        intervalRequests++;
        inFlight++;
        const p: Promise<void> = (kind === 'write' ? write() : read(kind))
          .catch((error: Error) => {
            errors++;
            if (errorSamples.length < 10) errorSamples.push(`${kind}: ${error.message}`);
          })
          .finally(() => {
            inFlight--;
            pending.delete(p);
          });
        pending.add(p);
      }
      if (Date.now() >= nextSample) {
        nextSample += intervalMs;
        const window = latencies.slice(intervalLatencyFrom).sort((a, b) => a - b);
        intervalLatencyFrom = latencies.length;
        const pct = (q: number) => (window.length ? percentile(window, q).toFixed(1) : 'n/a');
        const perSecond = Math.round(intervalRequests / (intervalMs / 1000));
        const failed = errors + resets - intervalFailuresFrom;
        intervalFailuresFrom = errors + resets;
        show(
          clock((Date.now() - loadStart) / 1000),
          await sample(),
          `   ${String(perSecond).padStart(10)}  ${String(failed).padStart(6)}  ${pct(0.5).padStart(6)}  ${pct(0.99).padStart(6)}`,
        );
        intervalRequests = 0;
      }
      await sleep(10);
    }
    await Promise.all([...pending]);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const endSample = await sample();
    heaps.stop();
    show('end', endSample);

    // Against the trading server: each own account carries its last answered name; each created account exists once.
    let lost = 0;
    for (const w of writers) {
      if (w.lastName === null) continue;
      const a = await send('GET', `${pf4}/UserRecordRequest/${w.login}?requestTimeout=30`);
      if (a?.body.data?.name !== w.lastName) lost++;
    }
    const listedAll = await send('GET', `${pf4}/UsersRequest?requestTimeout=30`);
    const all = (listedAll?.body.data ?? []) as Array<{ login: number; name: string }>;
    if (!all.length) throw new Error("soak: could not read the trading server's accounts");
    const byName = new Map<string, number[]>();
    for (const a of all) byName.set(a.name, [...(byName.get(a.name) ?? []), a.login]);
    let duplicated = 0;
    for (const c of created.slice(writerCount)) {
      const found = byName.get(c.name) ?? [];
      if (!found.includes(c.login)) lost++;
      duplicated += Math.max(0, found.length - 1);
    }
    for (const w of writers) {
      if (w.lastName !== null) duplicated += Math.max(0, (byName.get(w.lastName) ?? []).length - 1);
      // A second account from the create that made this one would still bear the first name.
      if (w.lastName !== w.firstName) duplicated += (byName.get(w.firstName) ?? []).filter((l) => l !== w.login).length;
    }

    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (q: number) => Math.round(percentile(sorted, q) * 10) / 10;
    return {
      seconds: Math.round(loadSeconds * 10) / 10,
      requests,
      byKind,
      errors,
      errorSamples,
      resets,
      shed,
      writes,
      lost,
      duplicated,
      unresolved,
      latencyMs: { p50: pct(0.5), p99: pct(0.99) },
      memory,
      verdict: memoryVerdict(memory, loadSeconds, flatMb),
      heapVerdict: memoryVerdict(memory, loadSeconds, flatMb, liveHeap),
    };
  } finally {
    for (const inspector of inspectors ?? []) inspector.close();
    if (own) {
      await stack.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

function verdictLine(what: string, v: MemoryVerdict | null): string {
  return v === null
    ? `  ${what} over the last half: too few samples for a verdict`
    : `  ${what} over the last half (${v.samples} samples, fitted line): ${v.riseMb >= 0 ? '+' : '−'}` +
        `${Math.abs(v.riseMb).toFixed(1)} MB ± ${v.errorMb.toFixed(1)} MB: ${v.flat ? 'flat' : 'GROWING'} (within ${v.flatMb} MB)`;
}

/** The summary as lines for a terminal (the per-interval lines come through `log` as the run goes). */
export function formatSoakReport(r: SoakReport): string {
  const first = r.memory[0];
  const last = r.memory.at(-1)!;
  // The first interval's sample, once the load has warmed every path up; the start one is before any load.
  const warm = r.memory.length > 2 ? r.memory[1] : undefined;
  const delta = (from: MemorySample, to: MemorySample) =>
    (['edge', 'broker', 'sim', 'brokerHeap'] as const)
      .map((k) => {
        const a = from[k];
        const b = to[k];
        const name = k === 'brokerHeap' ? 'broker heap' : k;
        return a === null || b === null ? `${name} n/a` : `${name} ${b >= a ? '+' : '−'}${MB(Math.abs(b - a))}`;
      })
      .join(', ');
  const w = r.writes;
  return [
    `soak: ${r.requests} requests in ${r.seconds} s (${Math.round(r.requests / r.seconds)}/s; cached ${r.byKind.cached}, ` +
      `pages ${r.byKind.page}, live ${r.byKind.live}, writes ${r.byKind.write}), p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms`,
    `  errors ${r.errors}   connection resets ${r.resets}   shed ${r.shed}`,
    `  writes: ${w.updates} renames (${w.replays} replayed under their key, ${w.replayMismatches} answered differently), ` +
      `${w.creates} accounts created, ${w.retries} retries, ${w.deferred} turns deferred; lost ${r.lost}   duplicated ${r.duplicated}   unresolved ${r.unresolved}`,
    `  memory end − start: ${delta(first, last)}`,
    ...(warm ? [`  memory end − ${clock(warm.at)}:  ${delta(warm, last)}`] : []),
    verdictLine('edge RSS', r.verdict),
    verdictLine("heap the edge's isolates hold", r.heapVerdict),
    ...r.errorSamples.map((s) => `  error: ${s}`),
  ].join('\n');
}

const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) {
    console.error(`soak refused: ${name} must be a positive number`);
    process.exit(2);
  }
  return value;
};

if (isEntryModule(import.meta.url)) {
  const report = await runSoak({
    seconds: positive('SOAK_SECONDS', 600),
    rate: positive('SOAK_RATE', 200),
    inFlight: Math.round(positive('SOAK_IN_FLIGHT', 32)),
    writers: Math.round(positive('SOAK_WRITERS', 8)),
    intervalSeconds: positive('SOAK_INTERVAL_SECONDS', 60),
    flatMb: positive('SOAK_FLAT_MB', 50),
    log: (line) => console.log(line),
  });
  console.log(formatSoakReport(report));
  console.log(JSON.stringify(report));
  process.exit(
    report.lost === 0 &&
      report.duplicated === 0 &&
      report.resets === 0 &&
      report.errors === 0 &&
      report.unresolved === 0 &&
      report.writes.replayMismatches === 0
      ? 0
      : 1,
  );
}
