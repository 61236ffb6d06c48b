/**
 * Registry look-ups of the hot path, remembered per isolate for a few seconds (REGISTRY_CACHE_SECONDS): every API call
 * resolves its platform within the caller's organization and checks that the token's client is still registered and
 * enabled, and a registry read per call would cost more than the cached read it guards. The cache time is also the
 * bound on revocation: a removed or moved platform, and a disabled, removed or narrowed client, stop working within it
 * on every isolate, tokens already issued included.
 *
 * Platforms are keyed by organization and platform, so an entry can only ever answer the organization it was read
 * for, and only found platforms are remembered: a newly registered platform works at once. Client standings are
 * remembered found or not: an unknown client id stays unknown for the cache time (a client is registered before it
 * can hold a token, so this only delays an id re-registered right after its removal).
 */
import type { AdminOrganization, ClientStanding, PlatformEntry } from './records.js';
import { WORKER_DEFAULTS } from '../../shared/environment.js';

const MAX_ENTRIES = 10_000;
/** Seconds a look-up is remembered unless REGISTRY_CACHE_SECONDS says otherwise. */
export const DEFAULT_PLATFORM_CACHE_SECONDS = WORKER_DEFAULTS.REGISTRY_CACHE_SECONDS;

/** A bounded map of values that expire `ttlSeconds` after they were read; the oldest entry goes first when full. */
class ShortLivedCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(private readonly keepMissing: boolean) {}

  async get(key: string, ttlSeconds: number, load: () => Promise<T | null>): Promise<T | null> {
    if (ttlSeconds <= 0) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await load();
    if (value !== null || this.keepMissing) {
      this.entries.delete(key);
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value: value as T, until: now + ttlSeconds * 1000 });
    } else {
      this.entries.delete(key);
    }
    return value;
  }
}

const platforms = new ShortLivedCache<PlatformEntry>(false);
const clients = new ShortLivedCache<ClientStanding | null>(true);
const organizations = new ShortLivedCache<AdminOrganization>(false);

export function cachedPlatform(
  organizationId: string,
  platformId: string,
  ttlSeconds: number,
  load: () => Promise<PlatformEntry | null>,
): Promise<PlatformEntry | null> {
  return platforms.get(`${organizationId.toLowerCase()}:${platformId.toLowerCase()}`, ttlSeconds, load);
}

/** The client's standing (registered, enabled, scopes) as read at most `ttlSeconds` ago; null when not registered. */
export async function cachedClientStanding(
  clientId: string,
  ttlSeconds: number,
  load: () => Promise<ClientStanding | null>,
): Promise<ClientStanding | null> {
  return (await clients.get(clientId, ttlSeconds, load)) ?? null;
}

/** The organization with its jurisdiction (where its audit trail lives), as read at most `ttlSeconds` ago. */
export function cachedOrganization(
  organizationId: string,
  ttlSeconds: number,
  load: () => Promise<AdminOrganization | null>,
): Promise<AdminOrganization | null> {
  return organizations.get(organizationId.toLowerCase(), ttlSeconds, load);
}
