/**
 * How the edge names its gateway objects. Pure functions with no Workers types, so the launcher and the tests can
 * address the same objects the worker uses.
 *
 * - Link objects (`PlatformLink`): `LINKS_PER_PLATFORM` per trade platform, named `<platform>#<n>`; a call that needs
 *   no idempotency picks one by a hash of its trace id, so a platform's reads spread over several single-threaded
 *   objects instead of queueing behind one.
 * - Idempotency ledgers (`IdempotencyLedger`): keyed by API client and a hash of the `Idempotency-Key`,
 *   `<clientId>#<hash(key) mod IDEMPOTENCY_SHARDS>`, so one client's keys spread over several objects and no
 *   platform's traffic goes through them.
 */

export const DEFAULT_LINKS_PER_PLATFORM = 4;
export const DEFAULT_IDEMPOTENCY_SHARDS = 16;
/** Upper bound on either setting: more objects than this per platform or client buys nothing but idle sockets. */
const MAX_OBJECTS = 256;

/** FNV-1a, 32 bits: a stable, cheap spread of short strings; not a security boundary. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A configured object count: a whole number from 1 to 256, else the default. */
export function objectCount(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= MAX_OBJECTS ? n : fallback;
}

export function linkName(platform: string, n: number): string {
  return `${platform}#${n}`;
}

/** The link object a call goes through: spread by `spread` (a trace id or a call id) over the platform's links. */
export function pickLink(platform: string, spread: string, links: number): string {
  return linkName(platform, fnv1a(spread) % links);
}

/** The ledger that owns one client's `Idempotency-Key`. */
export function ledgerName(clientId: string, key: string, shards: number): string {
  return `${clientId}#${fnv1a(key) % shards}`;
}
