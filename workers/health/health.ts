/**
 * Health of the whole path, for probes. Every PF4/PF5 platform is served by its ordered list of brokers (the
 * registry's, else the edge's default list `BROKER_URL`); each broker involved is asked for its own `/healthz` once,
 * all in parallel. A platform is `up` when every broker of its list serves it (its manager session up there, or an
 * asleep cold standby that logs in on its first call), `degraded` when some but not all do (it has lost its standby, or its
 * primary), `down` when none does although some answered, and `unknown` when none of its brokers answered.
 *
 * The answer: 200 `ok` when every platform is up; 200 `degraded` when some platform is degraded (or a broker of the
 * default list does not answer) and none is down; 503 `down` when a platform is down or unknown, or no broker of the
 * default list answers. Anonymous, `/healthz` is about the deployment: every registered platform and the default list.
 * With a token it is about the caller: its own PF4/PF5 platforms and their brokers alone (the default list when it
 * has none), never another organization's platform. The body says which tier is how (edge, broker, platforms) and
 * nothing else: platform ids and their states are shown only to an authenticated caller, for its own organization's
 * platforms. Operators see every platform on a broker's own (internal) `/healthz`. No body carries secrets or broker
 * addresses.
 */
import type { Context } from 'hono';
import type { AppEnv, Caller } from '../env.js';
import { configOf } from '../config.js';
import { authenticate } from '../auth/requireToken.js';
import { brokerUrlsOfRow } from '../registry/registryStore.js';

const BROKER_PROBE_TIMEOUT_MS = 2000;

/**
 * A platform as a broker's `/healthz` lists it. `standby: 'cold'` is a cold standby: asleep (logged out), it serves,
 * since it logs in on its first call; awake, it serves once its session is up, like a hot one.
 */
type BrokerPlatform = { up?: boolean; standby?: string; asleep?: boolean } | undefined;

interface BrokerHealth {
  reachable: boolean;
  platforms: Record<string, BrokerPlatform>;
}

export type PlatformState = 'up' | 'degraded' | 'down' | 'unknown';
/** Brokers, or platforms as a tier: all of them up, some, or none. */
export type TierState = 'up' | 'degraded' | 'down';

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down';
  edge: 'up';
  /** The brokers asked: all answered, some, none. */
  broker: TierState;
  /** Authenticated: each of the caller's platforms. Anonymous: the tier as a whole. */
  platforms: Record<string, PlatformState> | TierState;
}

export async function healthz(c: Context<AppEnv>): Promise<Response> {
  let caller: Caller | null = null;
  if (c.req.header('authorization') !== undefined) {
    const authenticated = await authenticate(c);
    if (authenticated instanceof Response) return authenticated;
    caller = authenticated;
  }
  const defaultBrokers = configOf(c.env).BROKER_URL;
  // Anonymous: every organization's platforms, the probe is about the deployment. Authenticated: the caller's own.
  const select = 'SELECT id, type, broker_urls, broker_url FROM trade_platforms';
  const statement = caller
    ? c.env.DB.prepare(`${select} WHERE organization_id = ?`).bind(caller.organizationId)
    : c.env.DB.prepare(select);
  const { results } = await statement.all<{
    id: string;
    type: string;
    broker_urls: string | null;
    broker_url: string | null;
  }>();
  const served = results
    .filter((p) => p.type === 'PF4' || p.type === 'PF5')
    .map((p) => ({ id: p.id, brokers: brokerUrlsOfRow(p) ?? defaultBrokers }));
  // The default list answers for the deployment, and for a caller with no platform of its own.
  const withDefault = !caller || served.length === 0;
  const asked = new Set([...(withDefault ? defaultBrokers : []), ...served.flatMap((p) => p.brokers)]);
  const probes = new Map(await Promise.all([...asked].map(async (u) => [u, await probeBroker(u)] as const)));

  const platforms: Record<string, PlatformState> = {};
  for (const p of served)
    platforms[p.id] = platformState(
      p.id,
      p.brokers.map((u) => probes.get(u)!),
    );
  const states = Object.values(platforms);
  const defaultAnswering = withDefault ? defaultBrokers.filter((u) => probes.get(u)!.reachable).length : 0;
  const down = states.some((s) => s === 'down' || s === 'unknown') || (withDefault && defaultAnswering === 0);
  const degraded = states.includes('degraded') || (withDefault && defaultAnswering < defaultBrokers.length);
  const answering = [...probes.values()].filter((b) => b.reachable).length;
  const tier: TierState = states.some((s) => s === 'down' || s === 'unknown')
    ? 'down'
    : states.includes('degraded')
      ? 'degraded'
      : 'up';
  const report: HealthReport = {
    status: down ? 'down' : degraded ? 'degraded' : 'ok',
    edge: 'up',
    broker: answering === probes.size ? 'up' : answering === 0 ? 'down' : 'degraded',
    platforms: caller ? platforms : tier,
  };
  return c.json(report, down ? 503 : 200, { 'cache-control': 'no-store' });
}

/** A platform's state from what each broker of its list said (in list order). */
function platformState(id: string, brokers: BrokerHealth[]): PlatformState {
  if (!brokers.some((b) => b.reachable)) return 'unknown';
  const serving = brokers.filter((b) => {
    const p = b.reachable ? b.platforms[id] : undefined;
    return p?.up === true || (p?.standby === 'cold' && p.asleep !== false);
  }).length;
  return serving === brokers.length ? 'up' : serving > 0 ? 'degraded' : 'down';
}

/** A broker that answers at all is reachable; its 503 means some of its platforms are down, which they show. */
async function probeBroker(baseUrl: string): Promise<BrokerHealth> {
  try {
    const res = await fetch(new URL('/healthz', baseUrl).toString(), {
      signal: AbortSignal.timeout(BROKER_PROBE_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => ({}))) as { platforms?: BrokerHealth['platforms'] };
    return { reachable: true, platforms: body.platforms ?? {} };
  } catch {
    return { reachable: false, platforms: {} };
  }
}
