/**
 * `CORS_ORIGINS`: which browser origins may call the gateway. `*` (any origin: demos), else origins separated by
 * commas or spaces, each a scheme, host and optional port and nothing else (`https://terminal.example.com`,
 * `http://localhost:5173`); unset or empty: none. One parser for the edge worker and the launcher's start-time check,
 * so what `npm start` accepts is what the edge enforces.
 */

export type OriginPolicy = { kind: 'none' } | { kind: 'any' } | { kind: 'list'; origins: ReadonlySet<string> };

export interface ParsedOrigins {
  policy: OriginPolicy;
  /** Entries that are not an origin (a path, a query, another scheme, not a URL): the launcher refuses them. */
  invalid: string[];
}

/**
 * Reads the variable. An origin is compared the way a browser serializes it in the `Origin` header: scheme and host
 * in lower case, the scheme's default port left out (`HTTPS://Example.com:443/` is `https://example.com`).
 */
export function parseCorsOrigins(raw: string | undefined): ParsedOrigins {
  const entries = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  if (entries.includes('*'))
    return { policy: { kind: 'any' }, invalid: entries.filter((e) => e !== '*' && origin(e) === null) };
  const origins = new Set<string>();
  const invalid: string[] = [];
  for (const entry of entries) {
    const value = origin(entry);
    if (value === null) invalid.push(entry);
    else origins.add(value);
  }
  return { policy: origins.size === 0 ? { kind: 'none' } : { kind: 'list', origins }, invalid };
}

/** The serialized origin an entry names, or null when it names more (a path, a query) or something else. */
function origin(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return null;
  // `new URL('https://a.example/').pathname` is '/' too: a trailing slash is tolerated, a real path is not.
  if (/^[a-z]+:\/\/[^/]+\/./i.test(entry)) return null;
  return url.origin;
}

/** The `Access-Control-Allow-Origin` value for a request's `Origin` under a policy, or null when it may not call. */
export function allowedOrigin(policy: OriginPolicy, requestOrigin: string | undefined): string | null {
  if (requestOrigin === undefined || policy.kind === 'none') return null;
  if (policy.kind === 'any') return '*';
  return policy.origins.has(requestOrigin) ? requestOrigin : null;
}
