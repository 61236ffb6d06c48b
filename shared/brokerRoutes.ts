/**
 * Where each region's objects connect to a platform's brokers (`REGION_BROKER_ROUTES`, docs/regions.md): for a
 * region, a broker base URL may be reached at another base URL (a relay near the region, or the delay proxy of the
 * regions bench). A broker a region does not list is reached at its own URL. Written as JSON:
 * `{"apac": {"http://broker-a:8790": "http://relay-apac:8790"}}`.
 */
import { checkBrokerUrls } from './brokerUrls.js';
import { isRegion, REGIONS, type Region } from './regions.js';

export type RegionBrokerRoutes = Partial<Record<Region, Readonly<Record<string, string>>>>;

/** Most routes one region may list: every broker of a fleet. */
export const MAX_ROUTES_PER_REGION = 64;

/** The broker URL a route compares: the URL as written, without a trailing slash. */
const routeKey = (url: string) => url.replace(/\/+$/, '');

/** Reads the variable's JSON; the problem names the region or URL at fault and the rule. */
export function parseRegionBrokerRoutes(
  raw: string,
): { ok: true; value: RegionBrokerRoutes } | { ok: false; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, problem: 'must be a JSON object of regions, each an object of broker URL to URL' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { ok: false, problem: 'must be a JSON object of regions, each an object of broker URL to URL' };
  const value: RegionBrokerRoutes = {};
  for (const [region, routes] of Object.entries(parsed)) {
    if (!isRegion(region)) return { ok: false, problem: `names region ${region}: regions are ${REGIONS.join(', ')}` };
    if (typeof routes !== 'object' || routes === null || Array.isArray(routes))
      return { ok: false, problem: `${region}: must be an object of broker URL to URL` };
    const entries = Object.entries(routes as Record<string, unknown>);
    if (entries.length > MAX_ROUTES_PER_REGION)
      return { ok: false, problem: `${region}: must list at most ${MAX_ROUTES_PER_REGION} brokers` };
    const table: Record<string, string> = {};
    for (const [from, to] of entries) {
      const checked = checkBrokerUrls([from, to]);
      if (!checked.ok && typeof to === 'string' && routeKey(from) === routeKey(to))
        return { ok: false, problem: `${region}: routes ${from} to itself` };
      if (!checked.ok) return { ok: false, problem: `${region}: ${from} → ${String(to)} ${checked.problem}` };
      table[routeKey(from)] = to as string;
    }
    value[region] = table;
  }
  return { ok: true, value };
}

/** The URLs `region`'s objects connect to for `urls`, in the same order; the same list when the region has no routes. */
export function routeBrokerUrls(urls: readonly string[], region: Region, routes: RegionBrokerRoutes): string[] {
  const table = routes[region];
  if (table === undefined) return urls as string[];
  return urls.map((url) => table[routeKey(url)] ?? url);
}
