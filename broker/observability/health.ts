/**
 * The broker's /healthz report: every configured platform's manager session state. 200 when all are up (or none are
 * configured), 503 otherwise, with the same body either way so a probe sees which platform is down and why.
 *
 * And its /readyz report, for an orchestrator: 200 once the platforms are loaded (the platform file read, or the list
 * given) and every platform's manager session has begun its first connection attempt; 503 `starting` before that and
 * `stopping` once the broker closes. Whether a trading server answers never matters here (that is /healthz): a broker
 * whose trading server is down is not restarted for it.
 */
import type { Family } from '../../shared/protocol.js';
import type { PlatformSet } from '../platforms/platformSet.js';

export interface PlatformHealth {
  family: Family;
  up: boolean;
  since: string;
  lastError: string | null;
}

export interface BrokerHealth {
  status: 'ok' | 'degraded';
  platforms: Record<string, PlatformHealth>;
}

export function healthReport(platforms: PlatformSet): { statusCode: 200 | 503; body: BrokerHealth } {
  const body: BrokerHealth = { status: 'ok', platforms: {} };
  for (const p of platforms.all()) {
    const { up, since, lastError } = p.session.state;
    body.platforms[p.id] = { family: p.family, up, since, lastError };
    if (!up) body.status = 'degraded';
  }
  return { statusCode: body.status === 'ok' ? 200 : 503, body };
}

export interface BrokerReadiness {
  status: 'ready' | 'starting' | 'stopping';
  /** Open edge links. */
  links: number;
  /** Platforms served. */
  platforms: number;
}

/** What readiness needs of the platform set: whether it is loaded, and each session's connection attempts. */
export interface ReadinessSource {
  readonly loaded: boolean;
  all(): Iterable<{ session: { connectAttempts: number } }>;
}

export function readinessReport(platforms: ReadinessSource, stopping: boolean, links: number): { statusCode: 200 | 503; body: BrokerReadiness } {
  const served = [...platforms.all()];
  const started = platforms.loaded && served.every((p) => p.session.connectAttempts > 0);
  const status = stopping ? 'stopping' : started ? 'ready' : 'starting';
  return { statusCode: status === 'ready' ? 200 : 503, body: { status, links, platforms: served.length } };
}
