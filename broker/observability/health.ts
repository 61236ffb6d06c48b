/**
 * The broker's /healthz report: every configured platform's manager session state. 200 when all are up (or none are
 * configured), 503 otherwise, with the same body either way so a probe sees which platform is down and why.
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
