/**
 * `npm run bench:profile`: where an edge request's time goes. Starts the stack, then an edge of its own in local
 * workerd (the same Miniflare options as `launcher/edge.ts`, on the stack's registry, broker and signing key) running
 * the bench-only worker `bench/worker/stageWorker.ts` with the inspector on, and in one run:
 *
 *   1. stages: the same closed-loop autocannon load on the bare route, on routes that stop a cached read after each
 *      stage of the edge's work (token check, platform look-up, validation, shaping, a Durable Object hop answering
 *      from memory) and on the real cached read and cached page, all through workerd's direct socket to the worker as
 *      `launcher/edge.ts` serves callers, and the bare route and cached read once more through Miniflare's entry worker
 *      (what the edge served through before), and a write (v2 PF4 UserPasswordSet) without an Idempotency-Key and
 *      under a fresh one with the ledger stopped after each of its stages (bind: the key's row on disk; send: the call
 *      through a link object to the broker; complete: the answer stored, the real keyed write), in PROFILE_ROUNDS
 *      interleaved rounds so that the machine's changing
 *      load falls on every stage alike. Besides throughput and latency, each stage's CPU time per request in the
 *      edge's workerd process and in the broker process, from /proc: CPU time is what a stage costs whatever else the
 *      machine runs, and the difference to the stage before is that stage's own cost;
 *   2. CPU profiles of the edge worker's isolate and of the objects worker's (the gateway objects; both on workerd's
 *      one thread locally) under the cached read, the cached page and keyed writes: self time per module group and
 *      per function of the bundle;
 *   3. the cached read's tail: the machine's CPU pressure (share of the time some runnable task waited for a CPU),
 *      each process's CPU, and whether the slow answers (above the bare route's p99) come in bursts, all at once
 *      (a stall: the process was not running), or spread evenly; with the registry cache (REGISTRY_CACHE_SECONDS)
 *      at its default and at an hour, so a tail that comes with the registry cache expiring shows as the difference.
 *
 * Environment: PROFILE_PARTS (all; a comma list of reads, writes, profiles, tail), BENCH_CONNECTIONS (50),
 * BENCH_SECONDS (4 per stage and round), PROFILE_ROUNDS (3),
 * BENCH_WARMUP_SECONDS (2), PROFILE_SECONDS (8 per profile), PROFILE_TOP (20 functions), TAIL_SECONDS (10 per tail
 * run). Linux only (/proc).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { EDGE_WORKER, miniflareOptions, OBJECTS_WORKER } from '../launcher/edge.js';
import { startStack } from '../launcher/stack.js';
import { textModules } from '../launcher/workerAssets.js';
import { inspectWorkers } from './inspector.js';
import { cpuPressureUs, median, percentile } from './measure.js';
import { childProcessesNamed } from './processes.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
};
const connections = Math.round(num('BENCH_CONNECTIONS', 50));
const seconds = num('BENCH_SECONDS', 4);
const rounds = Math.round(num('PROFILE_ROUNDS', 3));
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const profileSeconds = num('PROFILE_SECONDS', 8);
const profileTop = Math.round(num('PROFILE_TOP', 20));
const tailSeconds = num('TAIL_SECONDS', 10);
const PARTS = ['reads', 'writes', 'profiles', 'tail'] as const;
const parts = new Set(
  (process.env.PROFILE_PARTS ?? PARTS.join(','))
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
);
for (const p of parts)
  if (!(PARTS as readonly string[]).includes(p))
    throw new Error(`PROFILE_PARTS: unknown part ${p} (one of ${PARTS.join(', ')})`);
/** High enough that the bench's one client is never refused; the limiter still counts every call. */
const UNLIMITED = '1000000000';

const say = (line: string) => process.stderr.write(`${line}\n`);

async function bundleStageWorker(): Promise<string> {
  const result = await build({
    entryPoints: [join(root, 'bench/worker/stageWorker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    write: false,
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
    external: ['cloudflare:*'],
    plugins: [textModules],
  });
  return result.outputFiles[0].text;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  failures: number;
  sample: string | null;
  times: { at: number; ms: number }[];
}

/** A POST and its body; `freshKey`: a new Idempotency-Key on every request. */
interface Post {
  body: string;
  freshKey?: boolean;
}
let keySerial = 0;

/** Closed-loop autocannon load on one path; every answer checked; latency and completion time per response. */
async function drive(
  base: string,
  path: string,
  headers: Record<string, string>,
  check: (body: string) => boolean,
  durationS: number,
  post?: Post,
): Promise<Run> {
  const times: { at: number; ms: number }[] = [];
  let failures = 0;
  let sample: string | null = null;
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((done, fail) => {
    const instance = autocannon(
      {
        url: `${base}${path}`,
        connections,
        duration: durationS,
        timeout: 30,
        headers,
        ...(post
          ? {
              method: 'POST' as const,
              body: post.body,
              ...(post.freshKey
                ? {
                    requests: [
                      {
                        setupRequest: (req: any) => ({
                          ...req,
                          headers: { ...headers, 'idempotency-key': `profile-${process.pid}-${keySerial++}` },
                        }),
                      },
                    ],
                  }
                : {}),
            }
          : {}),
        verifyBody: (raw) => {
          const body = raw === undefined ? '' : raw.toString();
          if (check(body)) return true;
          sample ??= body.slice(0, 300);
          return false;
        },
      },
      (error, r) => (error ? fail(error as Error) : done(r)),
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      times.push({ at: performance.now() - started, ms });
      if (status !== 200) failures++;
    });
  });
  const sorted = Float64Array.from(times.map((t) => t.ms)).sort();
  return {
    rps: times.length / (result.duration || durationS),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    failures: failures + result.mismatches + result.errors + result.timeouts,
    sample,
    times,
  };
}

const TICK_MS = 10; // USER_HZ 100: /proc CPU times are in 10 ms ticks

/** CPU time of every thread of a process (ms) and its involuntary context switches, from /proc. */
function processCpu(pid: number): {
  ms: number;
  busiestThreadMs: number;
  preempted: number;
  threads: Map<string, number>;
} {
  const threads = new Map<string, number>();
  let preempted = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      // Fields after the parenthesised name: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      threads.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
      preempted += Number(
        /nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? 0,
      );
    } catch {
      /* the thread ended */
    }
  }
  const ms = [...threads.values()].reduce((a, b) => a + b, 0);
  return { ms, busiestThreadMs: Math.max(0, ...threads.values()), preempted, threads };
}

interface Usage {
  wallMs: number;
  cpuMs: Record<string, number>;
  busiestEdgeThreadMs: number;
  edgePreempted: number;
  pressureUs: number;
}

/** Measures what the named processes spent while `work` ran. */
async function usage<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; usage: Usage }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpu(pid)]));
  const pressure = cpuPressureUs();
  const t0 = performance.now();
  const result = await work();
  const wallMs = performance.now() - t0;
  const after = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpu(pid)]));
  const edgeBefore = before.edge.threads;
  let busiest = 0;
  for (const [tid, ms] of after.edge.threads) busiest = Math.max(busiest, ms - (edgeBefore.get(tid) ?? 0));
  return {
    result,
    usage: {
      wallMs,
      cpuMs: Object.fromEntries(Object.keys(pids).map((k) => [k, after[k].ms - before[k].ms])),
      busiestEdgeThreadMs: busiest,
      edgePreempted: after.edge.preempted - before.edge.preempted,
      pressureUs: cpuPressureUs() - pressure,
    },
  };
}

/**
 * Waits until the edge process is nearly idle (answers still in flight when a load run stops are worked off), so
 * that no stage pays for the one before; at most 10 s.
 */
async function settle(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  let last = processCpu(pid).ms;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    const now = processCpu(pid).ms;
    if (now - last <= 20) return;
    last = now;
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Bundle line → the source module esbuild put there (its `// path` comment). */
function moduleLines(script: string): (line: number) => string {
  const starts: { line: number; module: string }[] = [];
  script.split('\n').forEach((text, line) => {
    const m = /^\/\/ ((?:node_modules|workers|shared)\/\S+)$/.exec(text);
    if (m) starts.push({ line, module: m[1] });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid].line <= line) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? '(bundle prologue)' : starts[lo - 1].module;
  };
}

/** A module's group: the package for dependencies, the folder for our own code. */
function groupOf(module: string): string {
  const dep = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module);
  if (dep) return dep[1];
  return module.split('/').slice(0, 2).join('/');
}

function summarize(isolate: string, title: string, profile: CpuProfile, script: string, requests: number): void {
  const moduleAt = moduleLines(script);
  const lines = script.split('\n');
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const special = /^\((idle|program|garbage collector|root)\)$/.test(functionName);
    const module = special
      ? functionName
      : url.endsWith('worker.js')
        ? moduleAt(lineNumber)
        : url
          ? `(runtime: ${url.split('/').pop()})`
          : '(native)';
    // An anonymous function is named by the start of its first line in the bundle.
    const name =
      functionName ||
      (url.endsWith('worker.js') ? `(anonymous: ${(lines[lineNumber] ?? '').trim().slice(0, 50)})` : '(anonymous)');
    const fn = special ? functionName : `${name}  ${module}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    const group = special ? functionName : url.endsWith('worker.js') ? groupOf(module) : module;
    groups.set(group, (groups.get(group) ?? 0) + us);
  }
  const idle = groups.get('(idle)') ?? 0;
  const busy = total - idle;
  const pct = (us: number, of: number) => `${((100 * us) / of).toFixed(1).padStart(5)} %`;
  console.log(
    `\nCPU profile of ${isolate}, ${title}: ${(total / 1000).toFixed(0)} ms sampled, idle ${pct(idle, total)}, busy ${(busy / 1000).toFixed(0)} ms for ${requests} requests (${(busy / Math.max(1, requests)).toFixed(0)} µs each)`,
  );
  console.log('busy time by module group:');
  for (const [group, us] of [...groups]
    .filter(([g]) => g !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)) {
    console.log(`  ${pct(us, busy)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${group}`);
  }
  console.log(`top ${profileTop} functions by self time (share of busy time):`);
  for (const [fn, us] of [...fns]
    .filter(([f]) => f !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, profileTop)) {
    console.log(`  ${pct(us, busy)}  ${fn}`);
  }
}

/** The slow answers of a run (above `threshold` ms) per second of the run in which they completed. */
function tailBySecond(run: Run, threshold: number): string {
  const perSecond = new Map<number, { slow: number; max: number }>();
  for (const t of run.times) {
    if (t.ms <= threshold) continue;
    const s = Math.floor(t.at / 1000);
    const e = perSecond.get(s) ?? { slow: 0, max: 0 };
    e.slow++;
    e.max = Math.max(e.max, t.ms);
    perSecond.set(s, e);
  }
  const last = Math.floor((run.times.at(-1)?.at ?? 0) / 1000);
  const cells: string[] = [];
  for (let s = 0; s <= last; s++) {
    const e = perSecond.get(s);
    cells.push(e ? `${s}s:${e.slow}/${e.max.toFixed(0)}ms` : `${s}s:-`);
  }
  return cells.join(' ');
}

const password = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = password;
const dataDir = mkdtempSync(join(tmpdir(), 'edge-profile-'));
say('starting the stack (simulator, broker, edge)...');
const stack = await startStack({
  dataDir,
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', accounts: 1000, trades: 2000, managers: [{ login: 1000, password }] },
      { name: 'demo-pf5', family: 'PF5', managers: [{ login: 1000, password }] },
    ],
  },
  edgeVars: { API_RATE_LIMIT: UNLIMITED },
});
let mf: Miniflare | undefined;
const secretOf = (env: string | undefined, file: string) => env ?? readFileSync(join(dataDir, file), 'utf8').trim();
try {
  const script = await bundleStageWorker();
  const vars = {
    BROKER_URL: stack.brokerUrl,
    BROKER_SECRET: secretOf(process.env.BROKER_SECRET, 'broker-secret'),
    AUTH_SIGNING_KEY: secretOf(process.env.AUTH_SIGNING_KEY, 'signing-key.json'),
    // The stack's edge issues the tokens: same issuer, audience and key, so they verify here too.
    PUBLIC_URL: process.env.PUBLIC_URL ?? 'http://127.0.0.1:8787',
    AUTH_AUDIENCE: process.env.AUTH_AUDIENCE ?? 'webapi',
    TOKEN_TTL_SECONDS: '3600',
    IDEMPOTENCY_RETENTION_HOURS: '24',
    API_RATE_LIMIT: UNLIMITED,
  };
  const options = (extra: Record<string, string> = {}) => {
    const base = miniflareOptions(script, { dataDir: join(dataDir, 'edge'), vars: { ...vars, ...extra } });
    return {
      ...base,
      // The hop-alone object lives with the gateway objects, in the objects worker.
      workers: base.workers.map((w) =>
        'durableObjects' in w
          ? {
              ...w,
              durableObjects: {
                ...w.durableObjects,
                BENCH_ECHO: { className: 'BenchEcho', scriptName: OBJECTS_WORKER },
                BENCH_LEDGER: { className: 'BenchLedger', scriptName: OBJECTS_WORKER, useSQLite: true },
              },
            }
          : w,
      ),
      // The gateway objects of this edge are its own: only the registry is shared with the stack's edge.
      durableObjectsPersist: false,
      inspectorPort: 0,
    };
  };
  const existing = new Set(childProcessesNamed('workerd'));
  mf = new Miniflare(options());
  // Stages go in through workerd's direct socket to the worker, as `launcher/edge.ts` serves callers; two rows go
  // through Miniflare's entry worker for comparison.
  const entry = (await mf.ready).href.replace(/\/$/, '');
  const base = (await mf.unsafeGetDirectURL(EDGE_WORKER)).href.replace(/\/$/, '');
  const edgePid = childProcessesNamed('workerd').find((pid) => !existing.has(pid));
  if (edgePid === undefined) throw new Error('cannot find the workerd process of the profiled edge');
  const pids = { edge: edgePid, broker: stack.broker.child.pid!, sim: stack.sim.child.pid!, bench: process.pid };

  const token = await stack.token();
  const auth = { authorization: `Bearer ${token}` };
  const platform = stack.platforms.pf4;
  const first = (await (
    await fetch(`${base}/api/v2/PF4/${platform}/UsersRequest?limit=1`, { headers: auth })
  ).json()) as { data?: { login: number }[] };
  const login = first.data?.[0]?.login;
  if (typeof login !== 'number') throw new Error(`no account to read: ${JSON.stringify(first)}`);

  const isOk = (b: string) => b === 'ok';
  const isRecord = (b: string) => b.includes('"error":null') && b.includes(`"login":${login}`);
  const isPage = (b: string) => b.includes('"error":null') && b.includes('"hasMore":true');
  const cachedPath = `/api/v2/PF4/${platform}/UserRecordGet/${login}`;
  const pagePath = `/api/v2/PF4/${platform}/TradesGet?limit=1000`;
  const writePath = `/api/v2/PF4/${platform}/UserPasswordSet/${login}`;
  const writeHeaders = { ...auth, 'content-type': 'application/json' };
  const written = (b: string) => b.includes('"error":null') && b.includes('"data":true');
  const password: Post = { body: JSON.stringify(`profile-${login}`) };
  const keyed: Post = { ...password, freshKey: true };
  type Stage = {
    name: string;
    path: string;
    headers: Record<string, string>;
    check: (b: string) => boolean;
    url?: string;
    post?: Post;
  };
  const readStages: Stage[] = [
    { name: 'worker answering a constant (no router)', path: '/bench/raw', headers: {}, check: isOk },
    { name: '+ one console.log line (access-log size)', path: '/bench/raw-log', headers: {}, check: isOk },
    { name: 'bare route: router, global middleware', path: '/livez', headers: {}, check: isOk },
    { name: '+ /api middleware: token, rate limit', path: '/api/bench/token', headers: auth, check: isOk },
    { name: '+ platform look-up', path: `/api/bench/platform/${platform}`, headers: auth, check: isOk },
    { name: '+ input validation', path: `/api/bench/validate/${platform}/${login}`, headers: auth, check: isOk },
    { name: '+ v2 shaping and answer', path: `/api/bench/shape/${platform}/${login}`, headers: auth, check: isRecord },
    {
      name: '+ Durable Object hop (answers from memory)',
      path: `/api/bench/object/${platform}/${login}`,
      headers: auth,
      check: isRecord,
    },
    {
      name: 'the hop as fetch instead of RPC',
      path: `/api/bench/object-fetch/${platform}/${login}`,
      headers: auth,
      check: isRecord,
    },
    { name: 'cached read (gateway object, link, broker)', path: cachedPath, headers: auth, check: isRecord },
    { name: 'cached page of 1,000 trades', path: pagePath, headers: auth, check: isPage },
    { name: "bare route via Miniflare's entry worker", path: '/livez', headers: {}, check: isOk, url: entry },
    { name: "cached read via Miniflare's entry worker", path: cachedPath, headers: auth, check: isRecord, url: entry },
  ];
  const writeStages: Stage[] = [
    {
      name: 'write without a key (UserPasswordSet)',
      path: writePath,
      headers: writeHeaders,
      check: written,
      post: password,
    },
    {
      name: 'keyed: ledger bind only (row on disk)',
      path: `/bench/ledger/bind${writePath}`,
      headers: writeHeaders,
      check: written,
      post: keyed,
    },
    {
      name: '+ send (link object, broker, server)',
      path: `/bench/ledger/send${writePath}`,
      headers: writeHeaders,
      check: written,
      post: keyed,
    },
    { name: '+ complete: the keyed write', path: writePath, headers: writeHeaders, check: written, post: keyed },
  ];
  // The bare route always, as every ratio's baseline.
  const stages: Stage[] = parts.has('reads')
    ? [...readStages]
    : readStages.filter((st) => st.path === '/livez' && !st.url);
  if (parts.has('writes')) stages.push(...writeStages);
  const profileCount = parts.has('profiles') ? (parts.has('reads') ? 2 : 0) + (parts.has('writes') ? 1 : 0) : 0;
  const total =
    stages.length * (rounds * seconds + warmupSeconds) +
    profileCount * profileSeconds +
    (parts.has('tail') ? 2 * (tailSeconds + warmupSeconds) : 0);
  const started = performance.now();
  const left = () => `about ${Math.max(0, total - (performance.now() - started) / 1000).toFixed(0)} s left`;

  // 1. Stages, warmed once, then measured in interleaved rounds.
  for (const [i, s] of stages.entries()) {
    say(`[warm-up ${i + 1}/${stages.length}] ${s.name}: ${warmupSeconds} s, ${left()}`);
    if (warmupSeconds > 0) await drive(s.url ?? base, s.path, s.headers, s.check, warmupSeconds, s.post);
    await settle(pids.edge);
  }
  const measured = stages.map(() => ({ runs: [] as Run[], cpu: [] as Usage[] }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, s] of stages.entries()) {
      say(`[round ${round + 1}/${rounds}, stage ${i + 1}/${stages.length}] ${s.name}: ${seconds} s, ${left()}`);
      const { result, usage: u } = await usage(pids, () =>
        drive(s.url ?? base, s.path, s.headers, s.check, seconds, s.post),
      );
      measured[i].runs.push(result);
      measured[i].cpu.push(u);
      await settle(pids.edge);
    }
  }
  const rows = measured.map(({ runs, cpu }) => {
    const requests = runs.reduce((n, r) => n + r.times.length, 0);
    const sorted = Float64Array.from(runs.flatMap((r) => r.times.map((t) => t.ms))).sort();
    const per = (ms: number) => (1000 * ms) / Math.max(1, requests); // µs per request
    return {
      rps: median(runs.map((r) => r.rps)),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      edgeUs: per(cpu.reduce((n, u) => n + u.cpuMs.edge, 0)),
      edgeThreadUs: per(cpu.reduce((n, u) => n + u.busiestEdgeThreadMs, 0)),
      brokerUs: per(cpu.reduce((n, u) => n + u.cpuMs.broker, 0)),
      edgeBusy: cpu.reduce((n, u) => n + u.busiestEdgeThreadMs, 0) / cpu.reduce((n, u) => n + u.wallMs, 0),
      failures: runs.reduce((n, r) => n + r.failures, 0),
      sample: runs.find((r) => r.sample)?.sample ?? null,
    };
  });
  const bareRow = stages.findIndex((st) => st.path === '/livez');
  const bare = rows[bareRow];
  console.log(
    `\n${connections} connections, ${rounds} interleaved rounds of ${seconds} s per stage; each stage adds its work to the one above`,
  );
  console.log(
    "edge CPU: the workerd process (all threads) per answer; +edge: this stage's own share; isolate busy: its busiest thread's share of the wall time",
  );
  console.log(
    `${'stage'.padEnd(44)} ${'req/s'.padStart(6)} ${'×bare'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'edge CPU µs'.padStart(11)} ${'+edge µs'.padStart(8)} ${'isolate busy'.padStart(12)} ${'broker µs'.padStart(9)}  failed`,
  );
  const pageRow = stages.findIndex((s) => s.path === pagePath);
  // Each stage against the one before; the bare route against the constant; the page against the cached read; the
  // entry worker rows against the same route through the direct socket; the hop as fetch against the shaping stage
  // (the RPC's alternative); the cached read against the RPC hop; the unkeyed write and the ledger's bind alone
  // against the bare route.
  const against = new Map<number, number>();
  const fetchRow = stages.findIndex((s) => s.path.startsWith('/api/bench/object-fetch/'));
  if (bareRow > 0) against.set(bareRow, 0);
  if (fetchRow >= 0) against.set(fetchRow, fetchRow - 2).set(fetchRow + 1, fetchRow - 1);
  if (pageRow >= 0)
    against
      .set(pageRow, pageRow - 1)
      .set(pageRow + 1, bareRow)
      .set(pageRow + 2, pageRow - 1);
  const unkeyedRow = stages.findIndex((s) => s.post && !s.post.freshKey);
  if (unkeyedRow >= 0) against.set(unkeyedRow, bareRow).set(unkeyedRow + 1, bareRow);
  rows.forEach((r, i) => {
    const prev = i === bareRow && bareRow === 0 ? undefined : rows[against.get(i) ?? i - 1];
    console.log(
      `${stages[i].name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} ${(r.rps / bare.rps).toFixed(2).padStart(5)}× ${r.p50.toFixed(2).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${r.edgeUs.toFixed(0).padStart(11)} ${(prev ? r.edgeUs - prev.edgeUs : 0).toFixed(0).padStart(8)} ${`${(100 * r.edgeBusy).toFixed(0)} %`.padStart(12)} ${r.brokerUs.toFixed(0).padStart(9)}  ${r.failures}${r.sample ? ` (${r.sample})` : ''}`,
    );
  });
  if (unkeyedRow >= 0) {
    const [unkeyed, keyedWrite] = [rows[unkeyedRow], rows[unkeyedRow + 3]];
    console.log(
      `keyed write / the same write without a key: throughput ${(keyedWrite.rps / unkeyed.rps).toFixed(2)}×, edge CPU per write ${(keyedWrite.edgeUs / unkeyed.edgeUs).toFixed(2)}× (+${(keyedWrite.edgeUs - unkeyed.edgeUs).toFixed(0)} µs)`,
    );
  }

  // 2. CPU profiles of both isolates at once: the edge worker's and the objects worker's (the gateway objects).
  const inspectorUrl = await mf.getInspectorURL();
  const isolates = [{ label: 'the edge isolate' }, { label: 'the objects isolate' }] as const;
  type Profiled = readonly [string, string, (b: string) => boolean, Record<string, string>, Post | undefined];
  const readProfiles: Profiled[] = [
    ['cached reads', cachedPath, isRecord, auth, undefined],
    ['cached pages of 1,000 trades', pagePath, isPage, auth, undefined],
  ];
  const writeProfiles: Profiled[] = [['keyed writes', writePath, written, writeHeaders, keyed]];
  const profiled = parts.has('profiles')
    ? [...(parts.has('reads') ? readProfiles : []), ...(parts.has('writes') ? writeProfiles : [])]
    : [];
  for (const [title, path, check, headers, post] of profiled) {
    say(`[profile] CPU profiles under ${title}: ${profileSeconds} s, ${left()}`);
    const inspectors = await inspectWorkers(inspectorUrl, [EDGE_WORKER, OBJECTS_WORKER]);
    try {
      for (const inspector of inspectors) {
        await inspector.send('Profiler.enable');
        await inspector.send('Profiler.setSamplingInterval', { interval: 200 });
        await inspector.send('Profiler.start');
      }
      const run = await drive(base, path, headers, check, profileSeconds, post);
      for (const [i, inspector] of inspectors.entries()) {
        const { profile } = await inspector.send<{ profile: CpuProfile }>('Profiler.stop');
        summarize(isolates[i].label, `${profileSeconds} s of ${title}`, profile, script, run.times.length);
      }
    } finally {
      for (const inspector of inspectors) inspector.close();
    }
  }

  // 3. The tail: CPU contention, and when the slow answers come.
  const threshold = bare.p99; // the bare route's
  if (parts.has('tail'))
    console.log(`\ncached read tail: answers slower than the bare route's p99 (${threshold.toFixed(1)} ms)`);
  for (const [label, extra] of !parts.has('tail')
    ? []
    : ([
        ['registry cache default (5 s)', {}],
        ['registry cache 3600 s', { REGISTRY_CACHE_SECONDS: '3600' }],
      ] as const)) {
    say(`[tail] cached read, ${label}: ${warmupSeconds} + ${tailSeconds} s, ${left()}`);
    await mf.setOptions(options(extra));
    const tailPids = { ...pids, edge: childProcessesNamed('workerd').find((pid) => !existing.has(pid)) ?? pids.edge };
    if (warmupSeconds > 0) await drive(base, cachedPath, auth, isRecord, warmupSeconds);
    const { result: run, usage: u } = await usage(tailPids, () => drive(base, cachedPath, auth, isRecord, tailSeconds));
    const slow = run.times.filter((t) => t.ms > threshold);
    // A stall shows as many slow answers completing together: count those completing within 5 ms of 10 others.
    const at = slow.map((t) => t.at).sort((a, b) => a - b);
    let bunched = 0;
    for (let i = 0; i < at.length; i++) {
      let lo = i;
      let hi = i;
      while (lo > 0 && at[i] - at[lo - 1] <= 5) lo--;
      while (hi < at.length - 1 && at[hi + 1] - at[i] <= 5) hi++;
      if (hi - lo >= 10) bunched++;
    }
    const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)} %`;
    console.log(
      `${label}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(1)} ms, max ${run.max.toFixed(0)} ms; ${slow.length} of ${run.times.length} slow, ${pct(bunched, Math.max(1, slow.length))} of them in bursts (10+ within 5 ms)`,
    );
    console.log(
      `  CPU of one core: edge ${pct(u.cpuMs.edge, u.wallMs)} (isolate thread ${pct(u.busiestEdgeThreadMs, u.wallMs)}), broker ${pct(u.cpuMs.broker, u.wallMs)}, simulator ${pct(u.cpuMs.sim, u.wallMs)}, load generator ${pct(u.cpuMs.bench, u.wallMs)}; ` +
        `machine CPU pressure (some task waiting for a CPU) ${pct(u.pressureUs / 1000, u.wallMs)} of the time; edge preempted ${(u.edgePreempted / (u.wallMs / 1000)).toFixed(0)} times/s`,
    );
    console.log(`  slow answers per second of the run (second:count/max ms): ${tailBySecond(run, threshold)}`);
  }
  if (rows.some((r) => r.failures > 0)) process.exitCode = 1;
} finally {
  await mf?.dispose();
  await stack.close();
  rmSync(dataDir, { recursive: true, force: true });
}
