/**
 * The broker's /healthz report: every configured platform's manager session state. 200 when all are up (or none are
 * configured), 503 otherwise, with the same body either way so a probe sees which platform is down and why. A cold
 * standby is reported with `standby: "cold"` and whether it is `asleep` (logged out), and never makes the broker 503:
 * being logged out is its normal state.
 *
 * Each platform also shows what its trading server's latest accepted login declared (`tradingServer`): the protocol
 * version, the server's name, family and build, the manager's rights and the event kinds in full, and the number of
 * commands (`commandCount`); `/healthz?commands` lists the commands too. Nothing of the platform file's credentials is
 * ever in it. A login answer the broker refused leaves the platform down with the refusal as `lastError` and no
 * `tradingServer`.
 *
 * And its /readyz report, for an orchestrator: 200 once the platforms are loaded (the platform file read, or the list
 * given) and every platform's manager session has begun its first connection attempt; 503 `starting` before that and
 * `stopping` once the broker closes; 503 `draining` while it drains (SIGTERM: it takes no new links or calls). A cold
 * standby, which logs in only when used, is begun once loaded. Whether a trading server answers never matters here
 * (that is /healthz): a broker whose trading server is down is not restarted for it.
 */
import type { ChangeKind, Family } from '../../shared/protocol.js';
import type { PlatformSet } from '../platforms/platformSet.js';

export interface PlatformHealth {
  family: Family;
  up: boolean;
  since: string;
  lastError: string | null;
  /** Present on a cold standby only. */
  standby?: 'cold';
  /** A cold standby logged out now (its `up` is false). */
  asleep?: boolean;
  /** What the trading server's latest accepted login declared; absent before one, and after a refused answer. */
  tradingServer?: TradingServerHealth;
}

export interface TradingServerHealth {
  version: number;
  server: string;
  family: Family;
  build: number;
  rights: string[];
  events: ChangeKind[];
  commandCount: number;
  /** With `/healthz?commands` only. */
  commands?: string[];
}

export interface HealthOptions {
  /** List every declared command, not only their number. */
  commands?: boolean;
}

export interface BrokerHealth {
  status: 'ok' | 'degraded';
  platforms: Record<string, PlatformHealth>;
}

export function healthReport(
  platforms: PlatformSet,
  options: HealthOptions = {},
): { statusCode: 200 | 503; body: BrokerHealth } {
  const body: BrokerHealth = { status: 'ok', platforms: {} };
  for (const p of platforms.all()) {
    const { up, since, lastError } = p.session.state;
    const health: PlatformHealth = p.cold
      ? { family: p.family, up, since, lastError, standby: 'cold', asleep: p.asleep }
      : { family: p.family, up, since, lastError };
    const declared = p.session.declared?.answer;
    if (declared) {
      health.tradingServer = {
        version: declared.version,
        server: declared.server,
        family: declared.family,
        build: declared.build,
        rights: [...declared.rights],
        events: [...declared.capabilities.events],
        commandCount: declared.capabilities.commands.length,
        ...(options.commands ? { commands: [...declared.capabilities.commands] } : {}),
      };
    }
    body.platforms[p.id] = health;
    if (!up && !p.cold) body.status = 'degraded';
  }
  return { statusCode: body.status === 'ok' ? 200 : 503, body };
}

export interface BrokerReadiness {
  status: 'ready' | 'starting' | 'draining' | 'stopping';
  /** Open edge links. */
  links: number;
  /** Platforms served. */
  platforms: number;
}

/** What readiness needs of the platform set: whether it is loaded, and each session's connection attempts. */
export interface ReadinessSource {
  readonly loaded: boolean;
  all(): Iterable<{ session: { connectAttempts: number }; cold?: boolean }>;
}

export function readinessReport(
  platforms: ReadinessSource,
  stopping: boolean,
  links: number,
  draining = false,
): { statusCode: 200 | 503; body: BrokerReadiness } {
  const served = [...platforms.all()];
  const started = platforms.loaded && served.every((p) => p.cold === true || p.session.connectAttempts > 0);
  const status = stopping ? 'stopping' : draining ? 'draining' : started ? 'ready' : 'starting';
  return { statusCode: status === 'ready' ? 200 : 503, body: { status, links, platforms: served.length } };
}
