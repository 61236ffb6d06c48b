/**
 * The edge half of `Idempotency-Key`: checks the key's form and fingerprints the request, so the platform gateway can
 * tell a retry of the same call from a different call reusing the key. The fingerprint is canonical: two spellings of
 * one call are one request. Path parameters count as the values they were validated to (the platform uuid in lower
 * case, `007` as login 7, a group split on `/` as its backslash name), the query in sorted order with its lists one
 * element per value (`logins=1,2` is `logins=1&logins=2`), the JSON body with sorted keys. Timing controls are left
 * out: a retry with a longer budget is the same request.
 */
import type { Operation } from '../../shared/catalog/index.js';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** What a repeat hears while the first request of its key has no answer yet. */
export const IN_PROGRESS_MESSAGE =
  'Idempotency-Key: the first request with this key is still in progress; repeat it to get its outcome';

/**
 * Whether a call of `entry` takes an Idempotency-Key at the edge itself (workers/registry/localKeys.ts): a change of
 * the edge's own resources under /api/v2/ (the webhook endpoints), which no broker runs.
 */
export const takesLocalKey = (entry: Pick<Operation, 'mutating' | 'path' | 'read'>) =>
  entry.mutating === true && entry.read === 'local' && entry.path.startsWith('/api/v2/');
const KEY_FORM = /^[\x21-\x7e]{1,255}$/;

export function idempotencyKeyProblem(key: string): string | null {
  return KEY_FORM.test(key) ? null : `${IDEMPOTENCY_HEADER}: must be 1 to 255 visible ASCII characters`;
}

/**
 * The path of a call with its parameters as validated: the route's template with `{tradePlatform}` the platform's
 * registry id (lower case) and every other `{param}` the canonical JSON of its validated value.
 */
export function canonicalPath(
  entry: Pick<Operation, 'path'>,
  platformId: string,
  args: Record<string, unknown>,
): string {
  return entry.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(name === 'tradePlatform' ? platformId.toLowerCase() : canonicalJson(args[name] ?? null)),
  );
}

/**
 * SHA-256 (hex) of method, path, sorted query (without `requestTimeout`) and the canonical JSON body. `path` is the
 * call's canonicalPath(); without it the URL's path is taken as sent. `url` may be the query alone as the route
 * parsed it (`pathname` is then unused): the fingerprint costs no second parse of the URL. The values of the query parameters named in
 * `lists` (the entry's list fields) count element by element, however they were joined.
 */
export async function requestHash(
  method: string,
  url: Pick<URL, 'searchParams' | 'pathname'>,
  body: unknown,
  path: string = url.pathname,
  lists: ReadonlySet<string> = NO_LISTS,
): Promise<string> {
  const query = [...url.searchParams]
    .flatMap(([k, v]): Array<[string, string]> => (lists.has(k) ? v.split(',').map((e) => [k, e]) : [[k, v]]))
    .filter(([k]) => k !== 'requestTimeout')
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  const text = `${method}\n${path}\n${query}\n${canonicalJson(body)}`;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const NO_LISTS: ReadonlySet<string> = new Set();

/** JSON with object keys sorted, so that the same body sent with another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'bigint') return value.toString(); // an id beyond 2^53 − 1, as its digits
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
