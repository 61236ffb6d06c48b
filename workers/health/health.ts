/**
 * Health of the whole path, for probes: `/healthz` is 200 only when the edge is up, every broker that serves a
 * registered PF4/PF5 platform answers its own `/healthz` with 200, and that broker reports each of those platforms'
 * manager sessions up; otherwise 503. The body says which part is down, and carries no secrets or broker addresses.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env.js';

const BROKER_PROBE_TIMEOUT_MS = 2000;

interface BrokerHealth {
  reachable: boolean;
  ok: boolean;
  platforms: Record<string, { up?: boolean } | undefined>;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  edge: 'up';
  broker: 'up' | 'down';
  platforms: Record<string, 'up' | 'down' | 'unknown'>;
}

export async function healthz(c: Context<AppEnv>): Promise<Response> {
  const defaultBroker = c.env.BROKER_URL ?? 'http://127.0.0.1:8790';
  // Every organization's platforms: the probe is about the deployment, not a caller.
  const { results } = await c.env.DB.prepare('SELECT id, type, broker_url FROM trade_platforms')
    .all<{ id: string; type: string; broker_url: string | null }>();
  const served = results.filter((p) => p.type === 'PF4' || p.type === 'PF5');
  const brokerUrls = new Set([defaultBroker, ...served.map((p) => p.broker_url ?? defaultBroker)]);
  const probes = new Map(await Promise.all([...brokerUrls].map(async (u) => [u, await probeBroker(u)] as const)));

  const platforms: HealthReport['platforms'] = {};
  for (const p of served) {
    const broker = probes.get(p.broker_url ?? defaultBroker)!;
    const up = broker.platforms[p.id]?.up;
    platforms[p.id] = !broker.reachable || up === undefined ? 'unknown' : up ? 'up' : 'down';
  }
  const brokersUp = [...probes.values()].every((b) => b.reachable);
  const ok = [...probes.values()].every((b) => b.ok) && Object.values(platforms).every((s) => s === 'up');
  const report: HealthReport = { status: ok ? 'ok' : 'degraded', edge: 'up', broker: brokersUp ? 'up' : 'down', platforms };
  return c.json(report, ok ? 200 : 503, { 'cache-control': 'no-store' });
}

/** A broker that answers at all is up; its 503 means some of its platforms are down, which the platforms show. */
async function probeBroker(baseUrl: string): Promise<BrokerHealth> {
  try {
    const res = await fetch(new URL('/healthz', baseUrl).toString(), { signal: AbortSignal.timeout(BROKER_PROBE_TIMEOUT_MS) });
    const body = (await res.json().catch(() => ({}))) as { platforms?: BrokerHealth['platforms'] };
    return { reachable: true, ok: res.status === 200, platforms: body.platforms ?? {} };
  } catch {
    return { reachable: false, ok: false, platforms: {} };
  }
}
