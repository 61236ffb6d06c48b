/**
 * The edge's Prometheus metrics at `GET /metrics`, for an operator's scraper: off (404) unless `METRICS_TOKEN` is set,
 * then only for `Authorization: Bearer <METRICS_TOKEN>` (the counts are the whole edge's, across organizations, so no
 * API client's token opens them).
 *
 * Counted per isolate while `METRICS_TOKEN` is set, as the access log sees each answer: requests by operation and
 * outcome, their durations by operation, 429 refusals by operation, and `Idempotency-Key` writes by how they were
 * answered (`first`: the call's own answer; `replayed`: a stored answer, `Idempotency-Replayed`; `unknown`:
 * `X-Request-Outcome: unknown`). Read at scrape time from the platforms' stream objects: SSE and hub clients per
 * platform. Locally (`npm start`, one workerd) the counts are the edge's; on Cloudflare each scrape reaches one
 * isolate, whose counts start with it (`edge_isolate_start_time_seconds` says when), so sum with `rate()` and read
 * totals from Workers Analytics.
 */
import { Hono } from 'hono';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { streamObjectName } from '../streams/fanout.js';
import { isJurisdiction, REGIONS, regionAllowed, type Region } from '../../shared/regions.js';
import { placedStub } from '../regions/objects.js';
import { timingSafeEqual } from '../../shared/secrets.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Series {
  counts: Float64Array;
  sum: number;
  count: number;
}

const requests = new Map<string, { operation: string; outcome: string; count: number }>();
const durations = new Map<string, Series>();
const rateLimited = new Map<string, number>();
/** Requests refused for coming from outside their client's allowed networks (auth/allowedNetworks.ts), by endpoint. */
const sourceRefused = new Map<'token' | 'api', number>([
  ['token', 0],
  ['api', 0],
]);
const idempotent = new Map<string, number>([
  ['first', 0],
  ['replayed', 0],
  ['unknown', 0],
]);
const startedAt = Date.now() / 1000;

/** Counts one answer (called by the access log with what it logs, and the answer's headers). */
export function countRequest(
  operation: string | null,
  outcome: string,
  status: number,
  seconds: number,
  request: Headers,
  answer: Headers,
): void {
  const op = operation ?? 'unknown route';
  const key = `${op}\n${outcome}`;
  const counted = requests.get(key);
  if (counted) counted.count++;
  else requests.set(key, { operation: op, outcome, count: 1 });
  let series = durations.get(op);
  if (!series) durations.set(op, (series = { counts: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 }));
  let i = 0;
  while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
  series.counts[i]++;
  series.sum += seconds;
  series.count++;
  if (status === 429) rateLimited.set(op, (rateLimited.get(op) ?? 0) + 1);
  if (request.has('idempotency-key')) {
    const result =
      answer.get('x-request-outcome') === 'unknown'
        ? 'unknown'
        : answer.get('idempotency-replayed') === 'true'
          ? 'replayed'
          : 'first';
    idempotent.set(result, idempotent.get(result)! + 1);
  }
}

/** A token request (`token`) or an API or stream call (`api`) refused: its client may not be used from its source. */
export function countSourceRefusal(endpoint: 'token' | 'api'): void {
  sourceRefused.set(endpoint, sourceRefused.get(endpoint)! + 1);
}

const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Stream clients per platform and region: each platform's stream objects asked (`STREAM_SHARDS` of them in every region
 * its organization's jurisdiction allows, each asked with its own placement, so asking never misplaces one).
 */
async function streamClients(
  env: AppEnv['Bindings'],
): Promise<Array<{ platform: string; region: Region; sse: number; hubs: number }>> {
  const shards = configOf(env).STREAM_SHARDS;
  const rows = await env.DB.prepare(
    'SELECT p.id, o.jurisdiction FROM trade_platforms p JOIN organizations o ON o.id = p.organization_id ORDER BY p.created, p.id',
  ).all<{ id: string; jurisdiction: string | null }>();
  const asks = rows.results.flatMap(({ id, jurisdiction: stored }) => {
    const jurisdiction = isJurisdiction(stored) ? stored : null;
    return REGIONS.filter((region) => regionAllowed(region, jurisdiction)).map(async (region) => {
      const each = await Promise.all(
        Array.from({ length: shards }, (_, shard) => {
          const stub = placedStub(env.STREAMS, streamObjectName(id, region, shard), {
            region,
            jurisdiction,
          }) as unknown as { stats(): Promise<{ sse: number; hubs: number }> };
          return stub.stats();
        }),
      );
      return {
        platform: id,
        region,
        sse: each.reduce((n, s) => n + s.sse, 0),
        hubs: each.reduce((n, s) => n + s.hubs, 0),
      };
    });
  });
  return Promise.all(asks);
}

/** The exposition text. */
export async function metricsText(env: AppEnv['Bindings']): Promise<string> {
  const out: string[] = [];
  const head = (name: string, type: string, help: string) =>
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  head(
    'edge_requests_total',
    'counter',
    'Requests answered by this isolate, per operation (catalog id or route) and outcome (ok, an error code, or a word for the status).',
  );
  for (const r of requests.values())
    out.push(`edge_requests_total{operation="${label(r.operation)}",outcome="${label(r.outcome)}"} ${r.count}`);
  head(
    'edge_request_duration_seconds',
    'histogram',
    'Time from a request to its answer in this isolate, per operation.',
  );
  for (const [op, s] of durations) {
    let cumulative = 0;
    BUCKETS.forEach((le, i) => {
      cumulative += s.counts[i];
      out.push(`edge_request_duration_seconds_bucket{le="${le}",operation="${label(op)}"} ${cumulative}`);
    });
    out.push(`edge_request_duration_seconds_bucket{le="+Inf",operation="${label(op)}"} ${s.count}`);
    out.push(`edge_request_duration_seconds_sum{operation="${label(op)}"} ${s.sum}`);
    out.push(`edge_request_duration_seconds_count{operation="${label(op)}"} ${s.count}`);
  }
  head(
    'edge_rate_limited_total',
    'counter',
    "Requests refused 429 (a client past API_RATE_LIMIT or TOKEN_RATE_LIMIT, the token endpoint's limits), per operation.",
  );
  for (const [op, count] of rateLimited) out.push(`edge_rate_limited_total{operation="${label(op)}"} ${count}`);
  head(
    'edge_idempotent_writes_total',
    'counter',
    'Writes sent with an Idempotency-Key, by answer: first (its own), replayed (a stored one), unknown (X-Request-Outcome: unknown).',
  );
  for (const [result, count] of idempotent) out.push(`edge_idempotent_writes_total{result="${result}"} ${count}`);
  head(
    'edge_stream_clients',
    'gauge',
    'Stream clients connected now, per trade platform, region of the stream objects and kind (sse, hub).',
  );
  for (const p of await streamClients(env)) {
    out.push(
      `edge_stream_clients{platform="${p.platform}",region="${p.region}",kind="sse"} ${p.sse}`,
      `edge_stream_clients{platform="${p.platform}",region="${p.region}",kind="hub"} ${p.hubs}`,
    );
  }
  head(
    'edge_source_refused_total',
    'counter',
    "Requests refused for coming from outside their client's allowed networks: token requests (endpoint token), API and stream calls (endpoint api).",
  );
  for (const [endpoint, count] of sourceRefused) out.push(`edge_source_refused_total{endpoint="${endpoint}"} ${count}`);
  head(
    'edge_isolate_start_time_seconds',
    'gauge',
    'When this isolate began counting (Unix seconds): its counters start at zero then.',
  );
  out.push(`edge_isolate_start_time_seconds ${startedAt}`);
  return `${out.join('\n')}\n`;
}

/** Constant-time comparison of the presented bearer with the configured token (as digests: no length is told). */
async function sameToken(presented: string, expected: string): Promise<boolean> {
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return timingSafeEqual(await digest(presented), await digest(expected));
}

export function metricsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/metrics', async (c, next) => {
    const token = configOf(c.env).METRICS_TOKEN;
    if (!token) return next();
    const presented = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (!(await sameToken(presented, token)))
      return c.text('a bearer of METRICS_TOKEN is required', 401, { 'www-authenticate': 'Bearer realm="metrics"' });
    return c.text(await metricsText(c.env), 200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
      'cache-control': 'no-store',
    });
  });
  return app;
}
