/**
 * The ordered list of brokers that serve a trade platform: the first healthy one takes its calls, the others stand by
 * (docs/architecture.md, "Brokers in pairs"). Written as http(s) base URLs separated by commas or spaces, both in the
 * edge's `BROKER_URL` (the default list for platforms the registry gives none) and in `npm run registry`; stored in
 * the registry as a JSON array of strings (`trade_platforms.broker_urls`).
 */

/** Most brokers one platform may name: a pair, a fleet's order, with room to spare. */
export const MAX_BROKERS_PER_PLATFORM = 8;

export type BrokerUrlsParse = { ok: true; value: string[] } | { ok: false; problem: string };

/** Reads a list written by hand: each entry an absolute http(s) URL, none twice, 1 to MAX_BROKERS_PER_PLATFORM. */
export function parseBrokerUrls(raw: string): BrokerUrlsParse {
  const entries = raw.split(/[\s,]+/).filter((e) => e !== '');
  return checkBrokerUrls(entries);
}

/** Checks a list already split (a registry row's JSON, a request body). */
export function checkBrokerUrls(entries: readonly unknown[]): BrokerUrlsParse {
  if (entries.length === 0) return { ok: false, problem: 'must name at least one broker URL' };
  if (entries.length > MAX_BROKERS_PER_PLATFORM)
    return { ok: false, problem: `must name at most ${MAX_BROKERS_PER_PLATFORM} broker URLs` };
  const seen = new Set<string>();
  for (const entry of entries) {
    if (typeof entry !== 'string') return { ok: false, problem: 'must be a list of http(s) URLs' };
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      return { ok: false, problem: `must be absolute http(s) URLs separated by commas; not one: ${entry}` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { ok: false, problem: `must be absolute http(s) URLs separated by commas; not one: ${entry}` };
    const key = url.href.replace(/\/$/, '');
    if (seen.has(key)) return { ok: false, problem: `names ${entry} twice` };
    seen.add(key);
  }
  return { ok: true, value: entries as string[] };
}

/** The registry column's text of a list, and back (a damaged column reads as no list: the default brokers serve). */
export function brokerUrlsColumn(urls: readonly string[] | null): string | null {
  return urls === null ? null : JSON.stringify(urls);
}

export function brokerUrlsOfColumn(text: string | null | undefined): string[] | null {
  if (text === null || text === undefined || text === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const checked = checkBrokerUrls(parsed);
  return checked.ok ? checked.value : null;
}
