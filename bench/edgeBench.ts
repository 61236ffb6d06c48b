/**
 * `npm run bench`: the edge's read and write paths through the whole stack, each measured with the same closed-loop
 * autocannon load right after the bare edge route in one run, so every figure is read as a ratio to that baseline on
 * a shared, noisy machine. Scenarios, in order:
 *
 *   bare      GET /livez: the router and the trace middleware, nothing else (the baseline)
 *   cached    v2 PF4 UserRecordGet/{login}: token, platform, validation, gateway object, broker, pumping cache
 *   page      v2 PF4 TradesGet?limit=1000: a cached page of 1,000 trades (a ~0.5 MB answer)
 *   sized     the baseline of `page` (run with it): a bare edge route answering a fixed body of the page's size from
 *             memory (`/bench/fixed/{bytes}`, bench/worker/edgeBenchWorker.ts), what sending that many bytes through
 *             the edge costs
 *   live      v2 PF4 UserRecordRequest/{login}: the same account read live from the trading server
 *   unkeyed   v2 PF4 UserPasswordSet/{login} without an Idempotency-Key: the write's own path (link object, broker,
 *             trading server), the baseline of `write`
 *   write     the same write with a fresh Idempotency-Key per call: the idempotency ledger on every call; both
 *             overwrite one account's password, so the simulator's state does not grow
 *   unaudited the unkeyed write on a second stack whose edge keeps no audit trail (AUDIT_RETENTION_DAYS=0), the
 *             baseline of the trail's cost: `unkeyed` records every call (docs/audit.md), this one none; with both,
 *             the two are then alternated in AUDIT_ROUNDS short rounds and the median of the rounds' ratios printed
 *   spread    the cached read spread round-robin over BENCH_PLATFORMS platforms (the demo one and extra simulated
 *             PF4 servers registered on the same simulator and broker), beside `cached`, all on one platform
 *
 * Every answer is checked (status, envelope without error, the expected record); a scenario with failed answers
 * prints samples and makes the run exit non-zero. Latencies are taken per response at sub-millisecond resolution.
 * CPU pressure is the share of each scenario's time during which some runnable task on the machine waited for a CPU
 * (Linux /proc/pressure/cpu): near 100 % the tails measure the machine's other load more than the gateway.
 *
 * Environment: BENCH_CONNECTIONS (50), BENCH_SECONDS (10 per scenario), BENCH_WARMUP_SECONDS (2 per scenario, not
 * counted), BENCH_PLATFORMS (8), BENCH_SCENARIOS (all; a comma list of the names above, `bare` is always run).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startStack, type Stack } from '../launcher/stack.js';
import { DEMO_PASSWORD_ENV } from '../launcher/demo.js';
import { RegistryStore } from '../workers/registry/registryStore.js';
import { cpuPressureUs, percentile } from './measure.js';

const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
};
const connections = Math.round(positive('BENCH_CONNECTIONS', 50));
const seconds = positive('BENCH_SECONDS', 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const platformCount = Math.max(2, Math.round(positive('BENCH_PLATFORMS', 8)));
const ALL = ['bare', 'cached', 'sized', 'page', 'live', 'unkeyed', 'unaudited', 'write', 'spread'] as const;
/** Rounds of the alternated comparison of the write with and without the audit trail. */
const AUDIT_ROUNDS = 6;
type ScenarioName = (typeof ALL)[number];
const chosen = new Set<ScenarioName>([
  'bare',
  ...((process.env.BENCH_SCENARIOS ?? ALL.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as ScenarioName[]),
]);
for (const name of chosen)
  if (!ALL.includes(name)) throw new Error(`BENCH_SCENARIOS: unknown scenario ${name} (one of ${ALL.join(', ')})`);
// The page is read as a ratio to the same-size bare answer.
if (chosen.has('page')) chosen.add('sized');

const PAGE = 1000;
const MANAGER_LOGIN = 1000;

interface Scenario {
  name: ScenarioName;
  label: string;
  method: 'GET' | 'POST';
  paths: string[];
  headers: Record<string, string>;
  body?: string;
  /** A fresh Idempotency-Key on every request. */
  freshKey?: boolean;
  /** Another edge than the stack's (the stack without an audit trail). */
  base?: string;
  verify(body: string): boolean;
}

interface Figures {
  scenario: Scenario;
  /** Share of the run during which some runnable task on the machine waited for a CPU (Linux PSI), or NaN. */
  pressure: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  failures: number;
  samples: string[];
}

/** One line of what is running and how much of the whole run remains; rewritten in place on a terminal. */
class Progress {
  private readonly started = performance.now();
  private timer: ReturnType<typeof setInterval> | undefined;
  constructor(private readonly totalSeconds: number) {}

  step(what: string, stepSeconds: number): void {
    this.stop();
    const stepStart = performance.now();
    const show = (final: boolean) => {
      const inStep = Math.min(stepSeconds, (performance.now() - stepStart) / 1000);
      const left = Math.max(0, this.totalSeconds - (performance.now() - this.started) / 1000);
      const line = `${what}: ${inStep.toFixed(0)}/${stepSeconds} s, about ${left.toFixed(0)} s left in the run`;
      if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${line}`);
      else if (final) process.stderr.write(`${line}\n`);
    };
    show(!process.stderr.isTTY);
    if (process.stderr.isTTY) this.timer = setInterval(() => show(false), 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
  }
}

/** Closed-loop load on one scenario for `durationS`; latencies from autocannon's per-response times. */
async function drive(base: string, s: Scenario, durationS: number): Promise<Figures> {
  const latencies: number[] = [];
  const samples = new Set<string>();
  let next = 0;
  let failures = 0;
  const verify = (raw: string | Buffer | undefined) => {
    const body = raw === undefined ? '' : raw.toString();
    if (s.verify(body)) return true;
    if (samples.size < 3) samples.add(body.slice(0, 300));
    return false;
  };
  let finished!: (result: autocannon.Result) => void;
  let failed!: (error: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const pressure0 = cpuPressureUs();
  const started = performance.now();
  const instance = autocannon(
    {
      url: base,
      connections,
      duration: durationS,
      timeout: 30,
      verifyBody: verify,
      requests: [
        {
          method: s.method,
          headers: s.headers,
          ...(s.body !== undefined ? { body: s.body } : {}),
          setupRequest: (req) => {
            const n = next++;
            req.path = s.paths[n % s.paths.length];
            if (s.freshKey) req.headers = { ...s.headers, 'idempotency-key': `bench-${process.pid}-${n}` };
            return req;
          },
        },
      ],
    },
    (error, result) => (error ? failed(error) : finished(result)),
  );
  instance.on('response', (_client, status, _bytes, responseTime) => {
    latencies.push(responseTime);
    if (status !== 200) {
      failures++;
      if (samples.size < 3) samples.add(`HTTP ${status}`);
    }
  });
  const result = await done;
  const pressure = (cpuPressureUs() - pressure0) / 1000 / (performance.now() - started);
  const sorted = Float64Array.from(latencies).sort();
  const elapsed = result.duration || durationS;
  return {
    scenario: s,
    pressure,
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    failures: failures + result.mismatches + result.errors + result.timeouts,
    samples: [...samples],
  };
}

async function getJson(url: string, headers: Record<string, string>): Promise<any> {
  const res = await fetch(url, { headers });
  return res.json();
}

/** Registers `count` extra PF4 platforms served by the simulator's bench servers and waits until each answers. */
async function addPlatforms(
  stack: Stack,
  servers: string[],
  auth: Record<string, string>,
): Promise<{ id: string; login: number }[]> {
  const store = new RegistryStore(await stack.edge.db());
  const { readFileSync, writeFileSync, renameSync } = await import('node:fs');
  const file = `${stack.dataDir}/broker-platforms.json`;
  const current = JSON.parse(readFileSync(file, 'utf8')) as { platforms: unknown[] };
  const added: { id: string; server: string }[] = [];
  for (const server of servers) {
    const entry = await store.addPlatform({
      organizationId: stack.organizationId,
      type: 'PF4',
      name: `Bench ${server}`,
    });
    added.push({ id: entry.platform.id, server });
  }
  current.platforms.push(
    ...added.map((p) => ({
      id: p.id,
      family: 'PF4',
      server: `ws://127.0.0.1:${stack.sim.port}/${p.server}`,
      login: MANAGER_LOGIN,
      // The stack's brokers hold the demo password (this bench's, SIM_MANAGER_PASSWORD) in this variable.
      passwordEnv: DEMO_PASSWORD_ENV,
    })),
  );
  // Replaced by rename, as the registry CLI does, so the broker's watcher never reads half a file.
  writeFileSync(`${file}.tmp`, JSON.stringify(current), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);

  const ready: { id: string; login: number }[] = [];
  const until = Date.now() + 60_000;
  for (const p of added) {
    for (;;) {
      const page = await getJson(`${stack.edgeUrl}/api/v2/PF4/${p.id}/UsersRequest?limit=1`, auth);
      const login = page.data?.[0]?.login;
      if (typeof login === 'number') {
        const cached = await getJson(`${stack.edgeUrl}/api/v2/PF4/${p.id}/UserRecordGet/${login}`, auth);
        if (cached.error === null) {
          ready.push({ id: p.id, login });
          break;
        }
      }
      if (Date.now() > until)
        throw new Error(`bench platform ${p.server} not serving: ${JSON.stringify(page).slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return ready;
}

const password = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = password;
// One client drives every scenario: keep its per-client rate limit (and so the lease path every call takes) but far
// above anything a run reaches, so no answer is a 429. API_RATE_LIMIT in the environment still wins.
process.env.API_RATE_LIMIT ??= '1000000000';
const managers = [{ login: MANAGER_LOGIN, password }];
const extraServers = Array.from({ length: platformCount - 1 }, (_, i) => `bench-pf4-${i + 1}`);
const spread = chosen.has('spread');

console.error(
  `starting the stack (simulator${spread ? ` with ${extraServers.length} extra PF4 servers` : ''}, broker, edge)...`,
);
const stack = await startStack({
  // The edge with one route more: the same-size baseline of large answers (`sized`).
  edgeEntry: fileURLToPath(new URL('./worker/edgeBenchWorker.ts', import.meta.url)),
  simConfig: {
    servers: [
      // Enough open trades for a full page of 1,000.
      { name: 'demo-pf4', family: 'PF4', accounts: 1000, trades: 2 * PAGE, managers },
      { name: 'demo-pf5', family: 'PF5', managers },
      ...(spread ? extraServers : []).map((name) => ({ name, family: 'PF4', ticksPerSecond: 0, managers })),
    ],
  },
});
// The same stack without an audit trail, for the trail's cost (`unaudited`); started only when that scenario runs.
const unaudited = chosen.has('unaudited')
  ? await startStack({
      simConfig: { servers: [{ name: 'demo-pf4', family: 'PF4', accounts: 1000, managers }] },
      edgeVars: { AUDIT_RETENTION_DAYS: '0' },
    })
  : null;
try {
  const token = await stack.token();
  const auth = { authorization: `Bearer ${token}` };
  const v2 = (platform: string) => `/api/v2/PF4/${platform}`;
  const demo = stack.platforms.pf4;
  const first = await getJson(`${stack.edgeUrl}${v2(demo)}/UsersRequest?limit=1`, auth);
  const login = first.data?.[0]?.login;
  if (typeof login !== 'number') throw new Error(`no account to read: ${JSON.stringify(first)}`);
  const others = spread ? await addPlatforms(stack, extraServers, auth) : [];
  // The page's size in bytes, for its same-size baseline.
  const pageBytes = chosen.has('sized')
    ? Buffer.byteLength(
        await (await fetch(`${stack.edgeUrl}${v2(demo)}/TradesGet?limit=${PAGE}`, { headers: auth })).text(),
      )
    : 0;

  const envelopeOk = (body: string) => body.includes('"error":null');
  const isRecord = (l: number) => (body: string) => envelopeOk(body) && body.includes(`"login":${l}`);
  const spreadTargets = [{ id: demo, login }, ...others];
  const scenarios = (
    [
      {
        name: 'bare',
        label: 'bare edge route (GET /livez)',
        method: 'GET',
        paths: ['/livez'],
        headers: {},
        verify: (b) => b === 'ok',
      },
      {
        name: 'cached',
        label: 'cached read, one platform (UserRecordGet)',
        method: 'GET',
        paths: [`${v2(demo)}/UserRecordGet/${login}`],
        headers: auth,
        verify: isRecord(login),
      },
      {
        name: 'sized',
        label: `bare route, a ${(pageBytes / 1024).toFixed(0)} KB body from memory`,
        method: 'GET',
        paths: [`/bench/fixed/${pageBytes}`],
        headers: {},
        verify: (b) => b.length === pageBytes && b.startsWith('{"data":"'),
      },
      {
        name: 'page',
        label: `cached page of ${PAGE} trades (TradesGet)`,
        method: 'GET',
        paths: [`${v2(demo)}/TradesGet?limit=${PAGE}`],
        headers: auth,
        // A full page: the envelope says more follow and the answer holds at least PAGE trade records.
        verify: (b) => envelopeOk(b) && b.includes('"hasMore":true') && b.split('"order":').length > PAGE,
      },
      {
        name: 'live',
        label: 'live read (UserRecordRequest)',
        method: 'GET',
        paths: [`${v2(demo)}/UserRecordRequest/${login}`],
        headers: auth,
        verify: isRecord(login),
      },
      {
        name: 'unkeyed',
        label: 'write without a key (UserPasswordSet)',
        method: 'POST',
        paths: [`${v2(demo)}/UserPasswordSet/${login}`],
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(`bench-${login}`),
        verify: (b) => envelopeOk(b) && b.includes('"data":true'),
      },
      ...(unaudited ? [await unauditedWrite(unaudited)] : []),
      {
        name: 'write',
        label: 'keyed write (the same + Idempotency-Key)',
        method: 'POST',
        paths: [`${v2(demo)}/UserPasswordSet/${login}`],
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(`bench-${login}`),
        freshKey: true,
        verify: (b) => envelopeOk(b) && b.includes('"data":true'),
      },
      {
        name: 'spread',
        label: `cached read over ${spreadTargets.length} platforms`,
        method: 'GET',
        paths: spreadTargets.map((t) => `${v2(t.id)}/UserRecordGet/${t.login}`),
        headers: auth,
        verify: (b) => envelopeOk(b) && spreadTargets.some((t) => b.includes(`"login":${t.login}`)),
      },
    ] satisfies Scenario[]
  ).filter((s) => chosen.has(s.name));

  const baseOf = (s: Scenario) => s.base ?? stack.edgeUrl;
  const progress = new Progress(scenarios.length * (seconds + Math.max(0, warmupSeconds)));
  const results: Figures[] = [];
  for (const [i, s] of scenarios.entries()) {
    const tag = `[${i + 1}/${scenarios.length}] ${s.label}`;
    // Each path warmed on its own (isolate, gateway objects, links, JIT) before it is measured.
    if (warmupSeconds > 0) {
      progress.step(`${tag}, warming up`, warmupSeconds);
      await drive(baseOf(s), s, warmupSeconds);
    }
    progress.step(`${tag}, measuring`, seconds);
    results.push(await drive(baseOf(s), s, seconds));
  }
  // The trail's cost once more, the two writes alternated in short rounds (each round's order swapped): the machine's
  // drift over a run falls on both alike, and the median of the rounds' ratios is the figure.
  const [withTrail, withoutTrail] = [
    scenarios.find((s) => s.name === 'unkeyed'),
    scenarios.find((s) => s.name === 'unaudited'),
  ];
  const trailRatios: number[] = [];
  if (withTrail && withoutTrail) {
    const roundSeconds = Math.max(1, Math.round(seconds / 3));
    for (let round = 0; round < AUDIT_ROUNDS; round++) {
      progress.step(`the audit trail's cost, alternated: round ${round + 1}/${AUDIT_ROUNDS}`, 2 * roundSeconds);
      const pair = round % 2 === 0 ? [withTrail, withoutTrail] : [withoutTrail, withTrail];
      const rps = new Map<Scenario, number>();
      for (const s of pair) rps.set(s, (await drive(baseOf(s), s, roundSeconds)).rps);
      trailRatios.push(rps.get(withTrail)! / rps.get(withoutTrail)!);
    }
  }
  progress.stop();

  const bare = results[0];
  const fixed = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
  const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '-');
  console.log(
    `\n${connections} connections, ${seconds} s per scenario (after ${warmupSeconds} s warm-up), autocannon, node ${process.version}`,
  );
  console.log(
    `${'scenario'.padEnd(44)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}   ${'req/s ×bare'.padStart(11)} ${'p50 ×bare'.padStart(9)} ${'p99 ×bare'.padStart(9)} ${'failed'.padStart(7)} ${'CPU pressure'.padStart(12)}`,
  );
  for (const r of results) {
    console.log(
      `${r.scenario.label.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} ${fixed(r.p50, 2).padStart(8)} ${fixed(r.p99).padStart(8)} ${fixed(r.max).padStart(8)}   ${ratio(r.rps, bare.rps).padStart(11)} ${ratio(r.p50, bare.p50).padStart(9)} ${ratio(r.p99, bare.p99).padStart(9)} ${String(r.failures).padStart(7)} ${(Number.isFinite(r.pressure) ? `${(100 * r.pressure).toFixed(0)} %` : '-').padStart(12)}`,
    );
  }
  const by = (n: ScenarioName) => results.find((r) => r.scenario.name === n);
  const [cached, live, spreadRun, unkeyed, keyed] = [
    by('cached'),
    by('live'),
    by('spread'),
    by('unkeyed'),
    by('write'),
  ];
  const [sized, page, noTrail] = [by('sized'), by('page'), by('unaudited')];
  if (sized && page)
    console.log(
      `cached page / the same-size bare answer (${pageBytes} bytes): throughput ${ratio(page.rps, sized.rps)}, p50 ${ratio(page.p50, sized.p50)}, p99 ${ratio(page.p99, sized.p99)}`,
    );
  if (cached && live)
    console.log(
      `cached read / live read: throughput ${ratio(cached.rps, live.rps)}, p50 ${ratio(cached.p50, live.p50)}, p99 ${ratio(cached.p99, live.p99)}`,
    );
  if (unkeyed && keyed)
    console.log(
      `keyed write / the same write without a key: throughput ${ratio(keyed.rps, unkeyed.rps)}, p50 ${ratio(keyed.p50, unkeyed.p50)}, p99 ${ratio(keyed.p99, unkeyed.p99)}`,
    );
  if (unkeyed && noTrail)
    console.log(
      `write with the audit trail / without it: throughput ${ratio(unkeyed.rps, noTrail.rps)}, p50 ${ratio(unkeyed.p50, noTrail.p50)}, p99 ${ratio(unkeyed.p99, noTrail.p99)}`,
    );
  if (trailRatios.length > 0) {
    const sorted = [...trailRatios].sort((x, y) => x - y);
    const median = (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
    console.log(
      `write with the audit trail / without it, alternated over ${trailRatios.length} rounds: throughput median ${median.toFixed(2)}× (rounds ${trailRatios.map((r) => `${r.toFixed(2)}×`).join(' ')})`,
    );
  }
  if (cached && spreadRun)
    console.log(
      `reads over ${spreadTargets.length} platforms / reads on one: throughput ${ratio(spreadRun.rps, cached.rps)}, p99 ${ratio(spreadRun.p99, cached.p99)}`,
    );
  for (const r of results)
    for (const sample of r.samples) console.log(`failed answer (${r.scenario.label}): ${sample}`);
  if (results.some((r) => r.failures > 0 || r.requests === 0)) process.exitCode = 1;
} finally {
  await stack.close();
  await unaudited?.close();
}

/** The unkeyed write on the stack without an audit trail. */
async function unauditedWrite(other: Stack): Promise<Scenario> {
  const auth = { authorization: `Bearer ${await other.token()}` };
  const path = `/api/v2/PF4/${other.platforms.pf4}`;
  const first = await getJson(`${other.edgeUrl}${path}/UsersRequest?limit=1`, auth);
  const login = first.data?.[0]?.login;
  if (typeof login !== 'number')
    throw new Error(`no account to write on the unaudited stack: ${JSON.stringify(first)}`);
  return {
    name: 'unaudited',
    label: 'the same write, no audit trail',
    method: 'POST',
    paths: [`${path}/UserPasswordSet/${login}`],
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(`bench-${login}`),
    base: other.edgeUrl,
    verify: (b) => b.includes('"error":null') && b.includes('"data":true'),
  };
}
