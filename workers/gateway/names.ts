/**
 * How the edge names its gateway objects. Pure functions with no Workers types, so the launcher and the tests can
 * address the same objects the worker uses.
 *
 * - Link objects (`PlatformLink`): `LINKS_PER_PLATFORM` per trade platform and region, named
 *   `<platform>@<region>#<n>`: the home region's take the platform's live reads and writes, each other region's its
 *   callers' cached reads (docs/regions.md). A call that needs no idempotency picks one by a hash of its trace id, so a
 *   platform's reads spread over several single-threaded objects instead of queueing behind one.
 * - Idempotency ledgers (`IdempotencyLedger`): keyed by API client and a hash of the `Idempotency-Key`,
 *   `<clientId>#<hash(key) mod IDEMPOTENCY_SHARDS>`, so one client's keys spread over several objects and no
 *   platform's traffic goes through them.
 */
import { WORKER_DEFAULTS } from '../../shared/environment.js';
import type { Region } from '../../shared/regions.js';

/** How many link objects and ledgers the edge uses when its variables do not say (shared/environment.ts). */
export const DEFAULT_LINKS_PER_PLATFORM = WORKER_DEFAULTS.LINKS_PER_PLATFORM;
export const DEFAULT_IDEMPOTENCY_SHARDS = WORKER_DEFAULTS.IDEMPOTENCY_SHARDS;

/** FNV-1a, 32 bits: a stable, cheap spread of short strings; not a security boundary. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function linkName(platform: string, region: Region, n: number): string {
  return `${platform}@${region}#${n}`;
}

/**
 * The link object a call goes through: spread by `spread` (a trace id or a call id) over the platform's links in
 * `region`.
 */
export function pickLink(platform: string, region: Region, spread: string, links: number): string {
  return linkName(platform, region, fnv1a(spread) % links);
}

/** The ledger that owns one client's `Idempotency-Key`. */
export function ledgerName(clientId: string, key: string, shards: number): string {
  return `${clientId}#${fnv1a(key) % shards}`;
}
