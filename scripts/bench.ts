/**
 * `npm run bench`: cached-read throughput and latency through the whole stack (edge → platform gateway → broker →
 * pumping cache) beside a bare edge route that returns a constant, measured in one run so the ratio is meaningful on
 * a shared, noisy machine. Options (environment): BENCH_CONNECTIONS (50), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2).
 */
import { Agent, request } from 'node:http';
import { startStack } from './stack.js';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

interface Result { name: string; requests: number; errors: number; seconds: number; rps: number; p50: number; p99: number; max: number; samples: string[] }

function get(agent: Agent, url: URL, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', fail);
    req.end();
  });
}

/** Closed-loop load: `connections` requests in flight until the time is up; latencies in milliseconds. */
async function load(name: string, url: URL, headers: Record<string, string>, check: (body: string) => boolean, durationS: number): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const samples = new Set<string>();
  const end = performance.now() + durationS * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await get(agent, url, headers);
        if (res.status !== 200 || !check(res.body)) {
          errors++;
          if (samples.size < 3) samples.add(`${res.status} ${res.body.slice(0, 300)}`);
        }
      } catch (error) {
        errors++;
        if (samples.size < 3) samples.add(String(error));
      }
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { name, requests: latencies.length, errors, seconds: elapsed, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99), max: latencies.at(-1) ?? NaN, samples: [...samples] };
}

const stack = await startStack({});
try {
  const token = await stack.token();
  const auth = { authorization: `Bearer ${token}` };
  const v2 = `${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}`;
  const first = JSON.parse((await get(new Agent(), new URL(`${v2}/UsersRequest?limit=1`), auth)).body);
  const login = first.data?.[0]?.login;
  if (!login) throw new Error(`no account to read: ${JSON.stringify(first)}`);

  const baseline = new URL(`${stack.edgeUrl}/livez`);
  const cached = new URL(`${v2}/UserRecordGet/${login}`);
  const isOk = (body: string) => body === 'ok';
  const isRecord = (body: string) => body.includes(`"login":${login}`) && body.includes('"error":null');

  // Warm both paths (isolate start, link set-up, JIT) before measuring.
  await load('warmup', baseline, {}, isOk, warmupSeconds);
  await load('warmup', cached, auth, isRecord, warmupSeconds);
  const bare = await load('bare edge route (GET /livez)', baseline, {}, isOk, seconds);
  const full = await load(`cached read (GET v2 PF4 UserRecordGet/${login})`, cached, auth, isRecord, seconds);

  const fmt = (r: Result) =>
    `${r.name.padEnd(48)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   ${r.requests} requests, ${r.errors} errors`;
  console.log(`\n${connections} connections, ${seconds} s per run, node ${process.version}`);
  console.log(fmt(bare));
  console.log(fmt(full));
  console.log(`ratio cached/bare: throughput ${(full.rps / bare.rps).toFixed(2)}×, p50 latency ${(full.p50 / bare.p50).toFixed(2)}×, p99 latency ${(full.p99 / bare.p99).toFixed(2)}×`);
  for (const r of [bare, full]) for (const sample of r.samples) console.log(`error answer (${r.name}): ${sample}`);
  if (full.errors || bare.errors) process.exitCode = 1;
} finally {
  await stack.close();
}
