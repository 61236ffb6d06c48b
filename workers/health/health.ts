/**
 * Health of the whole path, for probes. Anonymous, `/healthz` is about the deployment: 200 only when the edge is up,
 * every broker that serves a registered PF4/PF5 platform (and the default broker) answers its own `/healthz` with 200,
 * and each of those platforms' manager sessions is up; otherwise 503. With a token it is about the caller: status and
 * code are decided by the caller's own PF4/PF5 platforms and the brokers serving them (the default broker when it has
 * none) alone, never by a broker's overall 503, which may be another organization's platform being down. The body
 * says which tier is down (edge, broker, platforms) and nothing else: platform ids and their states are shown only to
 * an authenticated caller, for its own organization's platforms. Operators see every platform on the broker's own
 * (internal) `/healthz`. No body carries secrets or broker addresses.
 */
import type { Context } from 'hono';
import type { AppEnv, Caller } from '../env.js';
import { configOf } from '../config.js';
import { authenticate } from '../auth/requireToken.js';

const BROKER_PROBE_TIMEOUT_MS = 2000;

interface BrokerHealth {
  reachable: boolean;
  ok: boolean;
  platforms: Record<string, { up?: boolean } | undefined>;
}

export type PlatformState = 'up' | 'down' | 'unknown';

export interface HealthReport {
  status: 'ok' | 'degraded';
  edge: 'up';
  broker: 'up' | 'down';
  /** Authenticated: each of the caller's platforms. Anonymous: the tier as a whole. */
  platforms: Record<string, PlatformState> | 'up' | 'down';
}

export async function healthz(c: Context<AppEnv>): Promise<Response> {
  let caller: Caller | null = null;
  if (c.req.header('authorization') !== undefined) {
    const authenticated = await authenticate(c);
    if (authenticated instanceof Response) return authenticated;
    caller = authenticated;
  }
  const defaultBroker = configOf(c.env).BROKER_URL;
  // Anonymous: every organization's platforms, the probe is about the deployment. Authenticated: the caller's own.
  const select = 'SELECT id, type, broker_url FROM trade_platforms';
  const statement = caller
    ? c.env.DB.prepare(`${select} WHERE organization_id = ?`).bind(caller.organizationId)
    : c.env.DB.prepare(select);
  const { results } = await statement.all<{ id: string; type: string; broker_url: string | null }>();
  const served = results.filter((p) => p.type === 'PF4' || p.type === 'PF5');
  const serving = served.map((p) => p.broker_url ?? defaultBroker);
  const brokerUrls = new Set(caller && serving.length > 0 ? serving : [defaultBroker, ...serving]);
  const probes = new Map(await Promise.all([...brokerUrls].map(async (u) => [u, await probeBroker(u)] as const)));

  const platforms: Record<string, PlatformState> = {};
  for (const p of served) {
    const broker = probes.get(p.broker_url ?? defaultBroker)!;
    const up = broker.platforms[p.id]?.up;
    platforms[p.id] = !broker.reachable || up === undefined ? 'unknown' : up ? 'up' : 'down';
  }
  const brokersUp = [...probes.values()].every((b) => b.reachable);
  const platformsUp = Object.values(platforms).every((s) => s === 'up');
  // A caller's status is its platforms' (each 'up' only from a broker that answered); the deployment's also needs
  // every broker's own verdict, which covers platforms of every organization.
  const ok = caller ? brokersUp && platformsUp : [...probes.values()].every((b) => b.ok) && platformsUp;
  const tier = platformsUp ? 'up' : 'down';
  const report: HealthReport = { status: ok ? 'ok' : 'degraded', edge: 'up', broker: brokersUp ? 'up' : 'down', platforms: caller ? platforms : tier };
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
